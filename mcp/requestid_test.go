package mcp

import (
	"encoding/json"
	"errors"
	"io"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

func TestParseIntegerID(t *testing.T) {
	for _, tc := range []struct {
		raw string
		v   int64
		ok  bool
	}{
		{"0", 0, true}, {"-0", 0, true}, {"0.0e5", 0, true}, {"7", 7, true}, {"-3", -3, true},
		{"1e0", 1, true}, {"1E+2", 100, true}, {"2.50e1", 25, true}, {"10.000", 10, true}, {"1000e-3", 1, true},
		{"9007199254740991", maxExactID, true}, {"-9007199254740991", -maxExactID, true},
		{"9007199254740992", maxExactID + 1, true}, {"1e30", maxExactID + 1, true}, {"1e999999999999999999999", maxExactID + 1, true},
		{"1.5", 0, false}, {"25e-1", 0, false}, {"-0.5", 0, false}, {"1e-999999999999999999999", 0, false},
		{"1" + strings.Repeat("0", 3000) + "e-3000", 1, true},
	} {
		t.Run(tc.raw[:min(len(tc.raw), 30)], func(t *testing.T) {
			v, ok := parseIntegerID(tc.raw)
			if ok != tc.ok || ok && v != tc.v && !(tc.v > maxExactID && v > maxExactID) {
				t.Fatalf("parseIntegerID(%s) = %d, %v; want %d, %v", tc.raw, v, ok, tc.v, tc.ok)
			}
		})
	}
}

// Odd ids are answered alike with the fast path on and off: an integer
// however spelled under its value, what the SDK would answer under another
// id or not at all with an error for the id as sent; and the input's end
// then waits for nothing.
func TestOddIDsAnsweredAlike(t *testing.T) {
	const call = `"method":"tools/call","params":{"name":"sessions","arguments":{}}`
	cases := []struct {
		name, id string
		answerID string // the id of the answer, raw
		fast     bool   // the fast path takes the call
		want     string
	}{
		{"fractional", "1.5", "1.5", false, `"message":"request id 1.5 is not an integer; use an integer or a string id"`},
		{"fractional exponent", "25e-1", "25e-1", false, "request id 25e-1 is not an integer"},
		{"exponent integer", "1e0", "1", true, `"result"`},
		{"negative", "-7", "-7", true, `"result"`},
		{"beyond 2^53", "9007199254740993", "9007199254740993", false, "request id 9007199254740993 is larger than 9007199254740991"},
		{"beyond int64", "1e30", "1e30", false, "request id 1e30 is larger than"},
		{"null", "null", "null", false, "request id null is not allowed (MCP requires a string or an integer id)"},
		{"string", `"1"`, `"1"`, true, `"result"`},
		{"empty string", `""`, `""`, true, `"result"`},
	}
	answers := map[bool][]string{}
	took := make([]bool, len(cases))
	for _, fast := range []bool{false, true} {
		p := newStdioPeer(t, fast)
		p.handshake("2025-11-25")
		for i, tc := range cases {
			before := p.srv.fastCalls.Load()
			p.send(`{"jsonrpc":"2.0","id":` + tc.id + `,` + call + `}`)
			answers[fast] = append(answers[fast], p.await(tc.answerID))
			p.forget(tc.answerID)
			took[i] = p.srv.fastCalls.Load() > before
		}
		finishWithin(t, p, 30*time.Second)
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(answers[false][i], tc.want) {
				t.Errorf("answer lacks %s: %s", tc.want, answers[false][i])
			}
			if took[i] != tc.fast {
				t.Errorf("fast path taken: %v, want %v", took[i], tc.fast)
			}
			if sdk, fast := answers[false][i], answers[true][i]; sdk != fast {
				t.Errorf("responses differ\nSDK:  %s\nfast: %s", sdk, fast)
			}
		})
	}
}

// finishWithin ends the peer's input and fails the test unless runStdio
// returns within d.
func finishWithin(t *testing.T, p *stdioPeer, d time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.finish() }()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, io.EOF) {
			t.Fatalf("runStdio = %v", err)
		}
	case <-time.After(d):
		t.Fatalf("runStdio did not return within %v of the input's end", d)
	}
}

// admitID admits a request exactly when the SDK answers it under the id
// the client sent, and keys it as the SDK keys its requests; every
// request it refuses gets a reply with the id as sent.
func FuzzRequestID(f *testing.F) {
	for _, id := range []string{"1", "1.5", "1e0", "-3", "1e30", "9007199254740993", "null", `"a"`, `"\u0061"`, `"\ud800"`,
		"0.0", "-0", "2.50e1", "1E+2", "25e-1", "1e-400", "123456789012345678901234567890e-20"} {
		f.Add(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		f.Add(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping","x":1}`)
		f.Add(`{"jsonrpc":"2.0","id":` + id + `,"id":2,"method":"tools/call"}`)
	}
	f.Add(`{"jsonrpc":"2.0","ID":1.5,"id":1,"method":"ping"}`)
	f.Add(`{"jsonrpc":"2.0","i\u0064":1.5,"method":"ping"}`)
	f.Add(`{"jsonrpc":"2.0","id":null,"method":"notifications/initialized"}`)
	f.Fuzz(func(t *testing.T, line string) {
		msg := []byte(strings.TrimSpace(line))
		if reply, _ := checkMessage(msg); reply != nil || len(msg) == 0 {
			return // the guard answers it already
		}
		plain := plainRequest(msg)
		sdkMsg, err := decodeLine(msg, plain) // what the SDK gets
		if err != nil {
			t.Fatalf("checkMessage passes %q, which does not decode: %v", msg, err)
		}
		r, ok := readRequestID(msg, plain)
		if !ok {
			t.Fatalf("readRequestID cannot read %q, which the SDK decodes", msg)
		}
		a := admitID(r)
		req, isReq := sdkMsg.(*jsonrpc.Request)
		switch {
		case a.reply != nil:
			if !isReq {
				t.Fatalf("%q: a response refused", msg)
			}
			if exact := exactID(t, r.raw); req.IsCall() && exact != nil && exact.IsInt() && exact.Num().IsInt64() &&
				abs(exact.Num().Int64()) <= maxExactID {
				t.Fatalf("%q: refused, but the SDK answers it as sent", msg)
			}
			var resp struct{ ID json.RawMessage }
			if err := json.Unmarshal(a.reply, &resp); err != nil || string(resp.ID) != strings.TrimSpace(string(r.raw)) {
				t.Fatalf("%q: reply %s is not for the id %s", msg, a.reply, r.raw)
			}
		case a.key != "":
			if !isReq || !req.IsCall() {
				t.Fatalf("%q: counted, but the SDK takes it for no call", msg)
			}
			if a.key != callKey(req.ID) {
				t.Fatalf("%q: key %q, the SDK's id %v", msg, a.key, req.ID.Raw())
			}
			if n, isNum := req.ID.Raw().(int64); isNum {
				if exact := exactID(t, r.raw); exact != nil && exact.Cmp(new(big.Rat).SetInt64(n)) != 0 {
					t.Fatalf("%q: admitted, but the SDK answers it as %d", msg, n)
				}
			}
		default:
			if isReq && req.IsCall() {
				t.Fatalf("%q: not counted, but the SDK answers it", msg)
			}
		}
	})
}

// exactID is a number id's exact value; nil for a string, or an exponent
// too large to expand in a test.
func exactID(t *testing.T, raw []byte) *big.Rat {
	s := strings.TrimSpace(string(raw))
	if s == "" || s[0] == '"' || s == "null" {
		return nil
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 && len(s)-i > 5 {
		return nil
	}
	v, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("%s is no number", s)
	}
	return v
}

func abs(n int64) int64 { return max(n, -n) }

func BenchmarkAdmit(b *testing.B) {
	line := []byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"eval","arguments":{"cells":[{"code":"1+1"}],"session":"bench"}}}`)
	id, _ := jsonrpc.MakeID(float64(12))
	f := newInflight()
	b.ReportAllocs()
	for b.Loop() {
		if f.admit(line, true) != nil {
			b.Fatal("refused")
		}
		f.answering(id)(nil)
	}
}
