package daemon

import (
	"strings"
	"testing"
)

// An eval's "output" field is checked whole; a bad one is refused with
// what to send instead.
func TestParseOutput(t *testing.T) {
	tests := []struct {
		name, line string
		want       Output
		ok         bool
		err        string
	}{
		{"absent", `{"op":"eval"}`, Output{}, false, ""},
		{"passthrough", `{"output":{"noSpill":true,"passthrough":true}}`, Output{NoSpill: true, Passthrough: true}, true, ""},
		{"bounded", `{"output":{"maxBytes":2000}}`, Output{MaxBytes: 2000}, true, ""},
		{"not an object", `{"output":true}`, Output{}, false, `"output" must be an object`},
		{"negative", `{"output":{"maxBytes":-1}}`, Output{}, false, `"output.maxBytes" must be a whole number`},
		{"fraction", `{"output":{"maxBytes":1.5}}`, Output{}, false, `"output.maxBytes" must be a whole number`},
		{"too big", `{"output":{"maxBytes":1e12}}`, Output{}, false, `"output.maxBytes" must be a whole number`},
		{"not a bool", `{"output":{"passthrough":"yes"}}`, Output{}, false, `"output.passthrough" must be true or false`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok, err := parseOutput([]byte(tc.line))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil || ok != tc.ok || got != tc.want {
				t.Fatalf("got %+v %v %v, want %+v %v", got, ok, err, tc.want, tc.ok)
			}
		})
	}
}
