package mcp

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/tidwall/gjson"
)

// maxBody is the longest request body the HTTP transport reads.
const maxBody = DefaultMaxLine

// guardBody answers, as the stdio transport does, a POSTed request the
// SDK would refuse with a plain-text 400 or 413: one nesting deeper than
// the SDK reads, or longer than maxBody. The Go SDK's client closes its
// session at such a status, so a call with deep or huge arguments would
// end every later call; an HTTP 200 JSON-RPC error under the request's id
// fails that call alone. Such a notification is dropped (202 Accepted,
// logged), as on stdio: JSON-RPC answers no notification, and a 400 with
// an id-null error closes that client's session too. It reports whether
// it answered; otherwise r.Body is the body again, for the SDK. Responses,
// requests without a usable id and what is not JSON are left to the SDK.
func guardBody(w http.ResponseWriter, r *http.Request, logger *slog.Logger) bool {
	if r.Method != http.MethodPost {
		return false
	}
	body, err := readBody(r)
	if err != nil {
		http.Error(w, "Bad Request: the request body could not be read: "+err.Error(), http.StatusBadRequest)
		return true
	}
	rest := r.Body
	r.Body = readCloser{io.MultiReader(bytes.NewReader(body), rest), rest}
	if len(body) > maxBody {
		// The id is read wherever it is: the TypeScript SDK's client
		// writes it after the params, past any prefix. The SDK still gets
		// the first maxBody+1 bytes, too many for it, when there is none.
		long := &memberScan{}
		long.feed(body)
		scanRest(long, rest)
		id, ok := long.request()
		if !ok {
			// Only a notifications/… method tells a notification: an id
			// that cannot be read may be there.
			m := gjson.ParseBytes(body[:64<<10])
			return isNotification(m) && strings.HasPrefix(m.Get("method").Str, "notifications/") &&
				drop(w, logger, "longer than the server's limit")
		}
		answer(w, errorResponse(id, jsonrpc.CodeInvalidRequest, fmt.Sprintf(
			"request of more than %d bytes is longer than the server's limit; "+
				"send less at once: split the cells, or write large text to a file and read it in a cell", maxBody)))
		return true
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' || !nestsDeeper(trimmed, maxDepth) {
		return false
	}
	m := gjson.ParseBytes(trimmed)
	if isNotification(m) {
		return drop(w, logger, "too deep")
	}
	id := idOf(trimmed)
	if id == "null" || !m.Get("method").Exists() {
		return false
	}
	answer(w, errorResponse(id, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: the message nests arrays and objects more than %d deep, "+
		"deeper than the server reads; send flatter arguments (deep data can go in as a JSON string)", maxDepth)))
	return true
}

// scanRest feeds s the rest of an over-long body, up to its top-level
// object's end (its end, when it is one JSON object); a read error ends it
// with what was read.
func scanRest(s *memberScan, body io.Reader) {
	buf := make([]byte, 64<<10)
	for !s.done {
		n, err := body.Read(buf)
		s.feed(buf[:n])
		if err != nil {
			return
		}
	}
}

// readBody reads at most maxBody+1 bytes of r's body: into one buffer of
// the announced length when there is one (the server ends the body there),
// as io.ReadAll's growing would allocate twice the body before the SDK's own
// read of it.
func readBody(r *http.Request) ([]byte, error) {
	n := r.ContentLength
	if n <= 0 || n > maxBody {
		return io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r.Body, body); err != nil {
		return nil, err
	}
	return body, nil
}

// drop accepts a notification the server cannot read, and does nothing
// with it; it reports true, that the request is answered.
func drop(w http.ResponseWriter, logger *slog.Logger, why string) bool {
	if logger != nil {
		logger.Warn("notification dropped: " + why)
	}
	w.WriteHeader(http.StatusAccepted)
	return true
}

func answer(w http.ResponseWriter, msg []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	w.Write(msg)
}

// readCloser is the body read so far and the rest, closed as the request's.
type readCloser struct {
	io.Reader
	io.Closer
}
