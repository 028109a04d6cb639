package pysource

import (
	"errors"
	"testing"
	"unicode/utf8"
)

func TestDecode(t *testing.T) {
	cases := []struct {
		name, src, want, wantErr string
	}{
		{"UTF-8", "print('café')\n", "print('café')\n", ""},
		{"a BOM is dropped", "\xef\xbb\xbfx = 1\n", "x = 1\n", ""},
		{"latin-1 declared", "# -*- coding: latin-1 -*-\nprint('caf\xe9')\n", "# -*- coding: latin-1 -*-\nprint('café')\n", ""},
		{"iso-8859-1 on the second line after a shebang", "#!/usr/bin/env python\n# coding=iso-8859-1\n'\xe9'\n", "#!/usr/bin/env python\n# coding=iso-8859-1\n'é'\n", ""},
		{"vim's fileencoding", "# vim: set fileencoding=latin_1 :\n'\xe9'\n", "# vim: set fileencoding=latin_1 :\n'é'\n", ""},
		{"cp1252", "# coding: cp1252\n'\x80'\n", "# coding: cp1252\n'€'\n", ""},
		{"shift_jis", "# coding: shift_jis\n'\x82\xa0'\n", "# coding: shift_jis\n'あ'\n", ""},
		{"utf-8 declared", "# coding: utf-8\n'é'\n", "# coding: utf-8\n'é'\n", ""},
		{"a declaration on the third line is none", "\n\n# coding: latin-1\n'\xe9'\n", "",
			"Non-UTF-8 code starting with '\\xe9' in file f.py on line 4, but no encoding declared; see https://peps.python.org/pep-0263/ for details"},
		{"after code it is none", "x = 1  # coding: latin-1\n'\xe9'\n", "",
			"Non-UTF-8 code starting with '\\xe9' in file f.py on line 2, but no encoding declared; see https://peps.python.org/pep-0263/ for details"},
		{"not UTF-8, undeclared", "print('a')\nprint('caf\xe9')\n", "",
			"Non-UTF-8 code starting with '\\xe9' in file f.py on line 2, but no encoding declared; see https://peps.python.org/pep-0263/ for details"},
		{"an unknown encoding", "# coding: bogus\nprint(1)\n", "", "encoding problem: bogus"},
		{"a BOM and another encoding", "\xef\xbb\xbf# coding: latin-1\nprint(1)\n", "", "encoding problem: iso-8859-1 with BOM"},
		{"declared utf-8 but not", "# coding: utf-8\n'\xe9'\n", "", "(unicode error) 'utf-8' codec can't decode byte 0xe9 on line 2 of f.py"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Decode([]byte(c.src), "f.py")
			if c.wantErr != "" {
				var se *SyntaxError
				if !errors.As(err, &se) || se.Msg != c.wantErr {
					t.Fatalf("error %v, want SyntaxError %q", err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("Decode = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// Decode never panics; UTF-8 without a declaration is itself; whatever it
// returns is UTF-8.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{"x = 1\n", "# coding: latin-1\n\xe9", "\xef\xbb\xbf# coding: cp1252\n\x80", "#\n# coding=shift_jis\n\x82", "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		got, err := Decode(src, "f.py")
		if err != nil {
			return
		}
		if !utf8.ValidString(got) {
			t.Fatalf("%q decoded to text that is not UTF-8: %q", src, got)
		}
		if declared(src) == "" && utf8.Valid(src) && len(src) > 0 && src[0] != 0xef && got != string(src) {
			t.Fatalf("UTF-8 %q changed to %q", src, got)
		}
	})
}
