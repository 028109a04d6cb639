package frames

import (
	"encoding/json"
	"testing"
)

func TestDecodeFSString(t *testing.T) {
	cases := []struct {
		name, quoted, want string
		ok                 bool
	}{
		{"plain", `"/tmp/a b"`, "/tmp/a b", true},
		{"a byte not UTF-8", `"/tmp/bad\udcffdir"`, "/tmp/bad\xffdir", true},
		{"upper-case hex", `"\uDC80"`, "\x80", true},
		{"a pair is its character", `"\ud83d\udc80"`, "\U0001F480", true},
		{"a high surrogate alone", `"\ud83dx"`, "\uFFFDx", true},
		{"a low surrogate below the byte range", `"\udc7f"`, "\uFFFD", true},
		{"the usual escapes", `"\"\\\/\b\f\n\r\t\u00e9"`, "\"\\/\b\f\n\r\té", true},
		{"UTF-8 as is", `"é€"`, "é€", true},
		{"not quoted", `abc`, "", false},
		{"a short escape", `"\u12"`, "", false},
		{"a bad escape", `"\x"`, "", false},
		{"a control character", "\"a\nb\"", "", false},
		{"a bare quote", `"a"b"`, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := DecodeFSString(c.quoted)
			if got != c.want || ok != c.ok {
				t.Fatalf("DecodeFSString(%s) = %q, %v; want %q, %v", c.quoted, got, ok, c.want, c.ok)
			}
		})
	}
}

// What AppendFSString writes, DecodeFSString reads back byte for byte;
// what encoding/json writes, it reads as encoding/json does.
func FuzzDecodeFSString(f *testing.F) {
	for _, s := range []string{"", "/tmp/bad\xffdir", "\xed\xb2\x80", "💀", "a\"\\\n\u2028", "\x80\xfe"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := string(AppendFSString(nil, s))
		got, ok := DecodeFSString(enc)
		if !ok || got != s {
			t.Fatalf("%q encoded as %s decoded to %q, %v", s, enc, got, ok)
		}
		// encoding/json's own escapes (\u003c, \ufffd for a byte not UTF-8)
		// read as encoding/json reads them.
		marshalled, _ := json.Marshal(s)
		var viaJSON string
		if err := json.Unmarshal(marshalled, &viaJSON); err != nil {
			t.Fatal(err)
		}
		if dec, ok := DecodeFSString(string(marshalled)); !ok || dec != viaJSON {
			t.Fatalf("%s decoded to %q, %v; encoding/json read %q", marshalled, dec, ok, viaJSON)
		}
	})
}
