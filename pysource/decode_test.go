package pysource

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/evalhost/evalhost/internal/testkit"
)

var name = Name{Given: "f.py", Abs: "/d/f.py"}

// noPython fails t if Decode asks for the interpreter.
func noPython(t *testing.T) Python {
	return func() (string, error) {
		t.Helper()
		t.Fatal("Decode asked for the interpreter")
		return "", errors.New("none")
	}
}

// UTF-8 and Latin-1 are read in Go: no interpreter starts.
func TestDecodeWithoutPython(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"UTF-8", "print('café')\n", "print('café')\n"},
		{"a BOM is dropped", "\xef\xbb\xbfx = 1\n", "x = 1\n"},
		{"latin-1 declared", "# -*- coding: latin-1 -*-\nprint('caf\xe9')\n", "# -*- coding: latin-1 -*-\nprint('café')\n"},
		{"iso-8859-1 on the second line after a shebang", "#!/usr/bin/env python\n# coding=iso-8859-1\n'\xe9'\n", "#!/usr/bin/env python\n# coding=iso-8859-1\n'é'\n"},
		{"vim's fileencoding", "# vim: set fileencoding=latin_1 :\n'\xe9'\n", "# vim: set fileencoding=latin_1 :\n'é'\n"},
		{"utf-8 declared", "# coding: utf-8\n'é'\n", "# coding: utf-8\n'é'\n"},
		{"a BOM and utf-8 declared", "\xef\xbb\xbf# coding: utf-8\n'é'\n", "# coding: utf-8\n'é'\n"},
		{"a declaration after code is none", "x = 1  # coding: cp1252\n", "x = 1  # coding: cp1252\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Decode([]byte(c.src), name, noPython(t))
			if err != nil || got != c.want {
				t.Fatalf("Decode = %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// What Go does not read alone, the interpreter reads, each version as its
// python3 FILE does: a refusal in its words (3.8 names FILE as given, with
// a File line; 3.9+ absolute; 3.10 counts a line more; the PEP's address
// moved), a codec of its own, and a UTF-8 declaration that lets a stray
// byte pass in a comment but not in a string.
func TestDecodeAsEachPython(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"not UTF-8, undeclared", "print('a')\nprint('caf\xe9')\n", ""},
		{"a declaration on the third line is none", "\n\n# coding: latin-1\n'\xe9'\n", ""},
		{"an unknown encoding on line 2", "#!/usr/bin/env python3\n# coding: bogus\nprint(1)\n", ""},
		{"a BOM and another encoding", "\xef\xbb\xbf# coding: latin-1\nprint(1)\n", ""},
		{"utf-16", "# coding: utf-16\nprint(1)\n", ""},
		{"a line before the declaration is UTF-8", "#!/bin/x\xff\n# coding: cp1252\nprint(1)\n", ""},
		{"cp1252", "# coding: cp1252\nprint('\x80')\n", "# coding: cp1252\nprint('€')\n"},
		{"cp1252 refuses an undefined byte", "# coding: cp1252\nprint('\x81')\n", ""},
		{"shift_jis", "# coding: shift_jis\nprint('\x82\xa0')\n", "# coding: shift_jis\nprint('あ')\n"},
		{"hz", "# coding: hz\nprint('~{VP~}')\n", "# coding: hz\nprint('中')\n"},
		{"utf8, the codec", "# coding: utf8\r\nprint('\xc3\xa9')\r\n", "# coding: utf8\r\nprint('é')\n"},
		{"declared utf-8, a stray byte in a comment", "# coding: utf-8\n# caf\xe9\nprint(1)\n", "# coding: utf-8\n# caf\uFFFD\nprint(1)\n"},
		{"declared utf-8, a stray byte in a string", "# coding: utf-8\nx = 'caf\xe9'\n", ""},
		{"a BOM, a stray byte in a name", "\xef\xbb\xbfcaf\xe9 = 1\n", ""},
	}
	for _, version := range []string{"3.8", "3.9", "3.10", "3.11", "3.12", "3.13"} {
		t.Run(version, func(t *testing.T) {
			py := testkit.PythonVersion(t, version)
			dir := t.TempDir()
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					file := filepath.Join(dir, "f.py")
					if err := os.WriteFile(file, []byte(c.src), 0o600); err != nil {
						t.Fatal(err)
					}
					cmd := exec.Command(py, "f.py")
					cmd.Dir = dir
					var stderr bytes.Buffer
					cmd.Stderr = &stderr
					runErr := cmd.Run()
					got, err := Decode([]byte(c.src), Name{Given: "f.py", Abs: file}, func() (string, error) { return py, nil })
					if c.want != "" {
						if runErr != nil || err != nil || got != c.want {
							t.Fatalf("Decode = %q, %v; want %q (python%s: %v, %q)", got, err, c.want, version, runErr, stderr.String())
						}
						return
					}
					var se *SyntaxError
					if !errors.As(err, &se) || se.Text != stderr.String() || runErr == nil {
						t.Fatalf("Decode error %v, want python%s's refusal %q (%v)", err, version, stderr.String(), runErr)
					}
				})
			}
		})
	}
}

// Without an interpreter, what needs one is an error saying so.
func TestDecodeNeedsPython(t *testing.T) {
	_, err := Decode([]byte("# coding: cp1252\n'\x80'\n"), name, func() (string, error) { return "", errors.New("no python3 on PATH") })
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("cp1252")) || !bytes.Contains([]byte(err.Error()), []byte("no python3 on PATH")) {
		t.Fatalf("error %v, want one naming the encoding and the missing interpreter", err)
	}
}

// Decode never panics; UTF-8 without a declaration is itself; whatever it
// returns is UTF-8.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{"x = 1\n", "# coding: latin-1\n\xe9", "\xef\xbb\xbf# coding: cp1252\n\x80", "#\n# coding=shift_jis\n\x82", "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		got, err := Decode(src, name, func() (string, error) { return "", errors.New("no interpreter in the fuzz test") })
		if err != nil {
			return
		}
		if !utf8.ValidString(got) {
			t.Fatalf("%q decoded to text that is not UTF-8: %q", src, got)
		}
		if declared(src).enc == "" && utf8.Valid(src) && len(src) > 0 && src[0] != 0xef && got != string(src) {
			t.Fatalf("UTF-8 %q changed to %q", src, got)
		}
	})
}
