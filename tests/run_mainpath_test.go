package tests

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A directory or a zip application runs its __main__.py as python3 DIR
// and python3 APP.pyz run it: the path first on sys.path (its siblings
// import), sys.argv[0] as given, __file__ inside it, sys.exit's status.
func TestRunDirectoryAndZipApp(t *testing.T) {
	dir := t.TempDir()
	main := "import sys, helper\nprint('main', sys.argv, __name__, __spec__.name, helper.X, sys.path[0] == " +
		"__import__('os').path.abspath(sys.argv[0]))\nprint(__file__.endswith('__main__.py'))\nsys.exit(3)\n"
	app := filepath.Join(dir, "app")
	for name, src := range map[string]string{"__main__.py": main, "helper.py": "X = 'sibling'\n"} {
		if err := os.MkdirAll(app, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(app, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A zip application with a shebang line before the archive, as
	// python3 -m zipapp -p writes one.
	var zb strings.Builder
	zb.WriteString("#!/usr/bin/env python3\n")
	zw := zip.NewWriter(&zb)
	for name, src := range map[string]string{"__main__.py": main, "helper.py": "X = 'zipped'\n"} {
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(src))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "app.pyz"), []byte(zb.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"a directory", []string{"app", "a", "--b"}},
		{"a directory by its full path", []string{app}},
		{"a zip application", []string{"app.pyz", "x"}},
		{"a directory without __main__", []string{"empty"}},
	} {
		t.Run(c.name, func(t *testing.T) { sameAsPythonIn(t, dir, nil, c.args, c.args) })
	}
	t.Run("under --session", func(t *testing.T) {
		h := newDaemonHome(t)
		cmd := h.cmd("run", "--session", "za", app, "s")
		out, errOut, code := runCaptured(t, cmd, false)
		if code != 3 || !strings.Contains(out, "main ['"+app+"', 's'] __main__ __main__ sibling True\nTrue\n") {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
		}
	})
	t.Run("refused with parameters", func(t *testing.T) {
		cmd := command(t, "run", "-p", "a", "1", app)
		if _, errOut, code := runCaptured(t, cmd, false); code != 2 || !strings.Contains(errOut, "a directory or zip application: it has no parameters cell") {
			t.Fatalf("exit %d, stderr %q", code, errOut)
		}
	})
}
