package mcp

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	segjson "github.com/segmentio/encoding/json"
	"github.com/tidwall/gjson"
)

// The SDK answers a request under its id as it decoded it: a number made
// an int64 (1.5 answered as 1, 2^53+1 as 2^53, 1e30 as whatever the CPU
// makes of the overflow), null or no id a notification (never answered),
// and a request with the id of one it runs dropped unanswered. A client
// waits for ever for such an answer, and so did the end of stdin. So a
// request is admitted only when its id is one the SDK answers as sent; the
// others are answered here, with an error that says what to send instead.

// maxExactID is the largest integer id admitted: every integer up to it is
// exact as a float64, which the SDK's decoder and most clients (JavaScript)
// read numbers as, so its answer carries the id the client sent. Untyped,
// as it is compared with float64s and int64s; printed as int64(maxExactID),
// since it overflows a 32-bit platform's int.
const maxExactID = 1<<53 - 1

// numberID says what is wrong with a number id, "" when it is an integer
// the SDK answers exactly (n).
func numberID(raw string) (n int64, problem string) {
	v, ok := parseIntegerID(raw)
	switch {
	case !ok:
		return 0, fmt.Sprintf("request id %s is not an integer; use an integer or a string id", raw)
	case v > maxExactID || v < -maxExactID:
		return 0, fmt.Sprintf("request id %s is larger than %d, the largest integer id this server echoes exactly; "+
			"use a smaller integer or a string id", raw, int64(maxExactID))
	}
	return v, ""
}

// parseIntegerID reads a JSON number's exact decimal value: ok when it is an
// integer (1, -3, 1.0, 1e0, 25e-1 is not), its value saturated past
// maxExactID. It never builds the digits an exponent like 1e999999999 asks for.
func parseIntegerID(raw string) (v int64, ok bool) {
	neg := strings.HasPrefix(raw, "-")
	raw = strings.TrimPrefix(raw, "-")
	mant, exp := raw, int64(0)
	if i := strings.IndexAny(raw, "eE"); i >= 0 {
		mant = raw[:i]
		e := strings.TrimPrefix(strings.TrimPrefix(raw[i+1:], "+"), "-")
		for _, c := range e {
			if c < '0' || c > '9' {
				return 0, false
			}
			exp = min(exp*10+int64(c-'0'), 1<<50) // past the digits of any line
		}
		if raw[i+1] == '-' {
			exp = -exp
		}
	}
	intPart, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(intPart+frac, "0")
	exp -= int64(len(frac))
	for strings.HasSuffix(digits, "0") {
		digits = digits[:len(digits)-1]
		exp++
	}
	if digits == "" {
		return 0, true // 0, -0, 0.0e5
	}
	if exp < 0 {
		return 0, false // digits remain after the point
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	if int64(len(digits))+exp > 16 { // over 16 digits is over maxExactID
		v = maxExactID + 1
	} else {
		v, _ = strconv.ParseInt(digits+strings.Repeat("0", int(exp)), 10, 64)
	}
	if neg {
		v = -v
	}
	return v, true
}

// requestID is what the SDK reads of a message: whether it has a method,
// the method, and the id (raw JSON, nil when absent; str, a string id's
// value as the SDK will answer it).
type requestID struct {
	hasMethod bool
	method    string
	raw       []byte
	str       string
}

// readRequestID reads a message the lineGuard let through as the SDK's
// decoder reads it: a plain one with gjson (decodeLine builds its request
// so), any other with the decoder the SDK uses, keyed alike (the last of
// two "id" keys, case-sensitive, escapes in keys read).
func readRequestID(line []byte, plain bool) (requestID, bool) {
	if plain {
		m := gjson.ParseBytes(line)
		r := requestID{}
		if meth := m.Get("method"); meth.Exists() {
			r.hasMethod, r.method = true, meth.Str
		}
		if id := m.Get("id"); id.Exists() {
			r.raw, r.str = []byte(id.Raw), id.Str
		}
		return r, true
	}
	var w struct {
		ID     segjson.RawMessage `json:"id"`
		Method *string            `json:"method"`
	}
	dec := segjson.NewDecoder(bytes.NewReader(line))
	dec.DontMatchCaseInsensitiveStructFields()
	if err := dec.Decode(&w); err != nil {
		return requestID{}, false
	}
	r := requestID{raw: w.ID}
	if len(w.ID) > 0 && w.ID[0] == '"' && segjson.Unmarshal(w.ID, &r.str) != nil {
		return requestID{}, false
	}
	if w.Method != nil {
		r.hasMethod, r.method = true, *w.Method
	}
	return r, true
}

// admission is what to do with a message: pass it on, counted under key
// when it is a request the server will answer ("" for a notification or a
// response), or answer it with reply instead.
type admission struct {
	key   string
	reply []byte
}

// admitID decides on a message by its id alone; a duplicate is decided by
// the caller, which knows the requests running.
func admitID(r requestID) admission {
	if !r.hasMethod || r.raw == nil {
		return admission{} // a response to the server, or a notification
	}
	raw := string(bytes.TrimSpace(r.raw))
	switch raw[0] {
	case 'n': // null: the SDK takes it for a notification
		if strings.HasPrefix(r.method, "notifications/") {
			return admission{}
		}
		return admission{reply: errorResponse("null", jsonrpc.CodeInvalidRequest,
			"request id null is not allowed (MCP requires a string or an integer id); "+
				"use one, or leave id out to send a notification")}
	case '"':
		return admission{key: stringKey(r.str)}
	}
	n, problem := numberID(raw)
	if problem != "" {
		return admission{reply: errorResponse(raw, jsonrpc.CodeInvalidRequest, problem)}
	}
	return admission{key: intKey(n)}
}

// duplicateReply answers a request whose id (raw JSON) is that of a
// request still running, which the SDK would drop unanswered.
func duplicateReply(raw []byte) []byte {
	id := string(bytes.TrimSpace(raw))
	return errorResponse(id, jsonrpc.CodeInvalidRequest,
		fmt.Sprintf("request id %s is already in use by a running request; use a new id", id))
}
