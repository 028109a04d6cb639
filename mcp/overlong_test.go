package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// FuzzMemberScan holds memberScan, fed a JSON object in pieces, to gjson's
// reading of the whole object: the last top-level member whose key is
// "id" (raw, as the SDK's decoder takes the last), when it is a string or
// a number, and whether a top-level "method" is there.
func FuzzMemberScan(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{}}`,
		`{"method":"m","params":{"id":2,"s":"\"id\":3"},"jsonrpc":"2.0","id":"x"}`,
		`{"id":1,"method":"m","id":null}`,
		`{"id" : -1.5e3 , "method" : 0}`,
		`{"params":["\\",{"id":4}],"id":"a\"b\\"}`,
		`{"id":{"a":1},"method":"m"}`,
		`{"idx":1,"method":"m","i\u0064":5}`,
		`{"id":"` + strings.Repeat("y", maxIDBytes) + `","method":"m"}`,
		` {"method":"m","id":9}`,
		`{"method":"m","id":` + strings.Repeat(" ", 2*maxIDBytes) + `7` + strings.Repeat("\n", 2*maxIDBytes) + `}`,
	} {
		f.Add(s, uint8(3))
	}
	f.Fuzz(func(t *testing.T, msg string, step uint8) {
		trimmed := strings.TrimLeft(msg, " \t\r\n")
		if !json.Valid([]byte(msg)) || !strings.HasPrefix(trimmed, "{") {
			return
		}
		var wantID string
		var wantMethod bool
		gjson.Parse(msg).ForEach(func(k, v gjson.Result) bool {
			switch k.Raw {
			case `"id"`:
				wantID = ""
				if (v.Type == gjson.String || v.Type == gjson.Number) && len(v.Raw) <= maxIDBytes {
					wantID = v.Raw
				}
			case `"method"`:
				wantMethod = true
			}
			return true
		})
		var s memberScan
		n := int(step%16) + 1
		for i := 0; i < len(msg); i += n {
			s.feed([]byte(msg[i:min(i+n, len(msg))]))
		}
		if got := string(s.id); got != wantID || s.method != wantMethod {
			t.Fatalf("memberScan(%q) = id %q, method %v; want %q, %v", msg, got, s.method, wantID, wantMethod)
		}
	})
}
