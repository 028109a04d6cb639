package mcp

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// A progress token is echoed in every progress notification as the client
// sent it, or the call is refused saying why. The SDK reads numbers as
// float64: an integer token past 2^53-1 came back rounded
// (9007199254740993 as 9007199254740992), so a client never matched the
// notes to its call.
func TestProgressTokenEchoedExactlyOrRefused(t *testing.T) {
	p := newStdioPeer(t, true)
	p.handshake("2025-06-18")
	for i, tc := range []struct {
		name, token string
		refused     string // in the error; "" when the call runs
	}{
		{"string", `"tok"`, ""},
		{"the largest exact integer", "9007199254740991", ""},
		{"the smallest exact integer", "-9007199254740991", ""},
		{"one past it", "9007199254740993", "progress token is an integer larger than 9007199254740991"},
		{"far past it", "1e30", "progress token is an integer larger than 9007199254740991"},
		{"negative, past it", "-9007199254740993", "progress token is an integer larger than 9007199254740991"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p.mu.Lock()
			p.notes = nil
			p.mu.Unlock()
			line := p.call(i+10, `{"name":"eval","arguments":{"cells":[{"code":"import time; time.sleep(0.2)"}]},"_meta":{"progressToken":`+tc.token+`}}`)
			if tc.refused != "" {
				if e := gjson.Get(line, "error"); !e.Exists() || e.Get("code").Int() != -32602 ||
					!strings.Contains(e.Get("message").Str, tc.refused) || !strings.Contains(e.Get("message").Str, "use a string token or a smaller integer") {
					t.Fatalf("%.200s; progress notes echoed the token as %v; want error -32602 saying %q", line, p.echoed(), tc.refused)
				}
				return
			}
			if gjson.Get(line, "error").Exists() || gjson.Get(line, "result.isError").Bool() {
				t.Fatalf("the call failed: %s", line)
			}
			echoed := p.echoed()
			if len(echoed) == 0 {
				t.Fatal("no progress notification")
			}
			for _, got := range echoed {
				if got != tc.token {
					t.Fatalf("progress token %s echoed as %s", tc.token, got)
				}
			}
		})
	}
}

// echoed are the progress tokens of the notifications seen, as sent.
func (p *stdioPeer) echoed() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var tokens []string
	for _, n := range p.notes {
		tokens = append(tokens, gjson.Get(n, "params.progressToken").Raw)
	}
	return tokens
}
