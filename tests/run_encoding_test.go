package tests

import (
	"os"
	"path/filepath"
	"testing"
)

// A script in another encoding runs as python3 reads it (PEP 263: its
// coding declaration), and one python3 refuses is refused in its words:
// named as python3 names FILE (3.9+: absolute, from a relative FILE too),
// with its codecs (utf-16 refused; hz, utf-7, utf8 read), and a UTF-8
// declaration that lets a stray byte pass in a comment.
func TestRunReadsTheSourceEncoding(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, src string }{
		{"latin-1", "# -*- coding: latin-1 -*-\nprint('caf\xe9')\n"},
		{"after a shebang, vim's", "#!/usr/bin/env python3\n# vim: set fileencoding=iso-8859-1 :\nprint('caf\xe9')\n"},
		{"cp1252", "# coding: cp1252\nprint('\x80 5')\n"},
		{"a traceback shows the line", "# coding: latin-1\nimport traceback\ntry:\n    raise ValueError('caf\xe9')\nexcept ValueError:\n    traceback.print_exc()\n"},
		{"not UTF-8, undeclared", "print('a')\nprint('caf\xe9')\n"},
		{"an unknown encoding", "# coding: bogus\nprint(1)\n"},
		{"a BOM and latin-1", "\xef\xbb\xbf# coding: latin-1\nprint(1)\n"},
		{"utf-16", "# coding: utf-16\nprint(1)\n"},
		{"utf-32 on line 2", "#!/usr/bin/env python3\n# coding: utf-32\nprint(1)\n"},
		{"base64, not a text encoding", "# coding: base64\nprint(1)\n"},
		{"utf8", "# coding: utf8\nprint('caf\xc3\xa9')\n"},
		{"ascii", "# coding: ascii\nprint(1)\n"},
		{"ascii refuses a byte", "# coding: ascii\nprint('caf\xe9')\n"},
		{"utf-7", "# coding: utf-7\nprint('caf+AOk-')\n"},
		{"hz", "# coding: hz\nprint('~{VP~}')\n"},
		{"idna", "# coding: idna\nprint(1)\n"},
		{"cp1252 refuses an undefined byte", "# coding: cp1252\nprint('\x81')\n"},
		{"a line before the declaration is UTF-8", "#!/usr/bin/python\xff\n# coding: cp1252\nprint(1)\n"},
		{"declared UTF-8, a stray byte in a comment", "# coding: utf-8\n# caf\xe9\nprint('ran')\n"},
		{"declared UTF-8, a stray byte in a string", "# coding: utf-8\nprint('ran')\nx = 'caf\xe9'\n"},
		{"a BOM, a stray byte in a comment", "\xef\xbb\xbf# caf\xe9\nprint('ran')\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := filepath.Base(t.Name()) + ".py"
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, []byte(c.src), 0o600); err != nil {
				t.Fatal(err)
			}
			t.Run("absolute", func(t *testing.T) { sameAsPython(t, []string{p}, []string{p}) })
			t.Run("relative", func(t *testing.T) { sameAsPythonIn(t, dir, nil, []string{name}, []string{name}) })
		})
	}
}
