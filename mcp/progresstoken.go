package mcp

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// guardProgressToken refuses a tools/call whose progress token is an
// integer past maxExactID in size: the SDK reads it as a float64, so every
// progress notification carried it rounded (9007199254740993 as
// 9007199254740992) and the client could not match them to its call. The
// SDK gives no way to echo it as sent; the bound is the one request ids
// have (requestid.go). The refusal is an invalid-params error that says
// what to send instead.
func guardProgressToken(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		if method == "tools/call" {
			if params, ok := req.GetParams().(sdk.RequestParams); ok && params != nil {
				if v, ok := params.GetProgressToken().(float64); ok && math.Abs(v) > maxExactID && v == math.Trunc(v) {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(
						"progress token is an integer larger than %d in size (read as %s), which this server cannot echo "+
							"exactly in its progress notifications; use a string token or a smaller integer", int64(maxExactID), readAs(v))}
				}
			}
		}
		return next(ctx, method, req)
	}
}

// readAs writes a float64 as digits while they are few, else with an
// exponent.
func readAs(v float64) string {
	if math.Abs(v) < 1e21 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
