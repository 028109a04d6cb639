package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A number too large for a float64 (1e400) is refused naming its field
// and what the field takes, as any other bad argument is; before, the
// whole call was "arguments are not valid JSON", which it is.
func TestOutOfRangeNumberNamesItsField(t *testing.T) {
	for _, tc := range []struct {
		name, tool, args string
		want             []string
	}{
		{"a number field", "eval", `{"cells":[{"code":"1","timeout":1e400}]}`,
			[]string{"cells[0].timeout is 1e400", "more than 0 and at most 600"}},
		{"a negative one", "eval", `{"cells":[{"code":"1","timeout":-1e400}]}`,
			[]string{"cells[0].timeout is -1e400", "more than 0 and at most 600"}},
		{"an integer field", "job", `{"job":"job-1","offset":1e999}`,
			[]string{"offset is 1e999", "at least 0"}},
		{"a field of another type", "eval", `{"cells":[{"code":"1","title":1e400}]}`,
			[]string{"cells[0].title must be a string, not the number 1e400"}},
		{"a long literal is clipped", "eval", `{"cells":[{"code":"1","timeout":1` + strings.Repeat("0", 500) + `}]}`,
			[]string{"cells[0].timeout is 1000000000", "…", "more than 0 and at most 600"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newTestServer(t)
			session := goClientOverStdio(t, srv)
			res, err := session.CallTool(context.Background(), &sdk.CallToolParams{Name: tc.tool, Arguments: json.RawMessage(tc.args)})
			if err != nil {
				t.Fatalf("%s: %v", tc.tool, err)
			}
			got := textOf(res)
			for _, want := range tc.want {
				if !res.IsError || !strings.Contains(got, want) || len(got) > 400 {
					t.Fatalf("isError=%v: %q; want a short error containing %q", res.IsError, got, want)
				}
			}
		})
	}
}

func TestRefuseBigSaysTheBounds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		schema *jsonschema.Schema
		want   string
	}{
		{"number", number("", 0, 600), "x is 1e400, out of the range of numbers (a float64's, about ±1.8e308); it must be more than 0 and at most 600"},
		{"integer", integer("", 0), "x is 1e400, out of the range of numbers (a float64's, about ±1.8e308); it must be at least 0 and at most 9007199254740991"},
		{"untyped", &jsonschema.Schema{}, "x is 1e400, out of the range of numbers (a float64's, about ±1.8e308); send a smaller one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := checkValue(tc.schema, bigNumber("1e400"), "x"); err == nil || err.Error() != tc.want {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
		})
	}
}
