package gateway

import (
	"encoding/json"
	"testing"
)

var unquoteCases = []struct{ name, q string }{
	{"plain", `"abc"`},
	{"empty", `""`},
	{"simple escapes", `"a\nb\tc\"d\\e\/f\bg\fh\ri"`},
	{"unicode escapes", `"\u00e9\u20AC\u0000x"`},
	{"surrogate pair", `"\ud83d\ude00!"`},
	{"lone high surrogate", `"\ud83dx"`},
	{"high surrogate then non-low", `"\ud83d\u0041"`},
	{"lone low surrogate", `"\ude00"`},
	{"utf-8 text", `"héllo €"`},
	{"invalid utf-8", "\"a\xffb\""},
	{"not a string", `7`},
	{"unterminated escape", `"a\"`},
	{"bad escape", `"\x"`},
	{"short unicode escape", `"\u12"`},
	{"control character", "\"a\nb\""},
}

// unquoteInPlace decodes what encoding/json decodes, to the same text, and
// leaves alone what it declines.
func TestUnquoteInPlace(t *testing.T) {
	for _, tc := range unquoteCases {
		t.Run(tc.name, func(t *testing.T) { checkUnquote(t, []byte(tc.q)) })
	}
}

func FuzzUnquoteInPlace(f *testing.F) {
	for _, tc := range unquoteCases {
		f.Add([]byte(tc.q))
	}
	f.Fuzz(checkUnquote)
}

func checkUnquote(t *testing.T, q []byte) {
	var want string
	stdErr := json.Unmarshal(q, &want)
	before := string(q)
	got, ok := unquoteInPlace(q)
	switch {
	case !ok && string(q) != before:
		t.Fatalf("unquoteInPlace(%q) declined but changed it to %q", before, q)
	case ok && stdErr != nil:
		t.Fatalf("unquoteInPlace(%q) = %q, but encoding/json refuses it: %v", before, got, stdErr)
	case ok && got != want:
		t.Fatalf("unquoteInPlace(%q) = %q, encoding/json %q", before, got, want)
	case !ok && stdErr == nil && isString(before) && validUTF8(before):
		t.Fatalf("unquoteInPlace(%q) declined a string encoding/json decodes to %q", before, want)
	}
}

func isString(s string) bool { return len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' }

func validUTF8(s string) bool { return json.Valid([]byte(s)) && string([]rune(s)) == s }
