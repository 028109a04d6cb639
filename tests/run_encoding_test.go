package tests

import (
	"os"
	"path/filepath"
	"testing"
)

// A script in another encoding runs as python3 reads it (PEP 263: its
// coding declaration), and one python3 refuses is refused in its words.
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
	} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, filepath.Base(t.Name())+".py")
			if err := os.WriteFile(p, []byte(c.src), 0o600); err != nil {
				t.Fatal(err)
			}
			sameAsPython(t, []string{p}, []string{p})
		})
	}
}
