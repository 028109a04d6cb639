package mcp

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestLineGuard(t *testing.T) {
	long := strings.Repeat("x", 100)
	numReq := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":"` + long + `"}`
	strReq := `{"id":"r-1","method":"x","params":"` + long + `"}`
	for _, tc := range []struct {
		name, in, want string
	}{
		{"short lines pass", "{\"a\":1}\n{\"b\":2}\n", "{\"a\":1}\n{\"b\":2}\n"},
		{"last line without newline", "{\"a\":1}\n{\"b\":2}", "{\"a\":1}\n{\"b\":2}"},
		{"exactly max", strings.Repeat("y", 63) + "\n", strings.Repeat("y", 63) + "\n"},
		{"long request with a number id", numReq + "\n{\"ok\":1}\n", fmt.Sprintf(
			`{"jsonrpc":"2.0","id":7,"method":"evalhost/line_too_long","params":{"bytes":%d,"max":64}}`+"\n{\"ok\":1}\n", len(numReq)+1)},
		{"long request with a string id", strReq + "\n", fmt.Sprintf(
			`{"jsonrpc":"2.0","id":"r-1","method":"evalhost/line_too_long","params":{"bytes":%d,"max":64}}`+"\n", len(strReq)+1)},
		{"long notification is dropped", `{"method":"notifications/x","params":"` + long + "\"}\n{\"ok\":1}\n", "{\"ok\":1}\n"},
		{"long response is dropped", `{"id":3,"result":"` + long + "\"}\n{\"ok\":1}\n", "{\"ok\":1}\n"},
		{"id cut off is not guessed", `{"method":"x","params":"` + long + `","id":9}` + "\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &lineGuard{r: newSmallReader(tc.in), max: 64}
			got, err := io.ReadAll(g)
			if err != nil || string(got) != tc.want {
				t.Fatalf("got %q (%v)\nwant %q", got, err, tc.want)
			}
		})
	}
}

func TestIDOfPrefix(t *testing.T) {
	for prefix, want := range map[string]string{
		`{"jsonrpc":"2.0","id":12,"method":"a","params":{`: "12",
		`{"id":"abc","method":"a"`:                         `"abc"`,
		`{"method":"a","id":"ab`:                           "",
		`{"id":null,"method":"a",`:                         "",
		`{"id":{"x":1},"method":"a",`:                      "",
	} {
		got, ok := idOfPrefix([]byte(prefix))
		if got != want || ok != (want != "") {
			t.Errorf("idOfPrefix(%s) = %q %v, want %q", prefix, got, ok, want)
		}
	}
}

// newSmallReader hands out a few bytes per read into a small buffer, so
// lines span reads and buffer fills.
func newSmallReader(s string) *bufio.Reader {
	return bufio.NewReaderSize(iotest.HalfReader(strings.NewReader(s)), 16)
}
