package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// TestUntrustedModulesAreRefused: a module file or dir that another user owns
// or may write is not executed; its warning names it and says what to do,
// and the trusted modules beside it still load.
func TestUntrustedModulesAreRefused(t *testing.T) {
	mine, theirs, loose := t.TempDir(), t.TempDir(), t.TempDir()
	marker := t.TempDir()
	ran := func(name string) string {
		return "open(" + pyQuote(filepath.Join(marker, name)) + ", 'w').close()\n"
	}
	writeFile(t, mine, "good.py", "GOOD = 1\n")
	chown(t, writeFile(t, mine, "other_owner.py", ran("other_owner")), nobody)
	if err := os.Chmod(writeFile(t, mine, "group_writable.py", ran("group_writable")), 0o664); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(writeFile(t, mine, "world_writable.py", ran("world_writable")), 0o666); err != nil {
		t.Fatal(err)
	}
	writeFile(t, theirs, "in_their_dir.py", ran("in_their_dir"))
	chown(t, theirs, nobody)
	writeFile(t, loose, "in_loose_dir.py", ran("in_loose_dir"))
	if err := os.Chmod(loose, 0o777); err != nil {
		t.Fatal(err)
	}

	p := start(t, startOpts{modules: []string{mine, theirs, loose}})
	for _, want := range []struct{ path, why string }{
		{filepath.Join(mine, "other_owner.py"), "owned by uid 65534"},
		{filepath.Join(mine, "group_writable.py"), "writable by group (mode 0664)"},
		{filepath.Join(mine, "world_writable.py"), "writable by group and others (mode 0666)"},
		{theirs, "owned by uid 65534"},
		{loose, "writable by group and others (mode 0777)"},
	} {
		found := false
		for _, f := range p.early {
			if f.Type == frames.TypeWarning && strings.Contains(f.Message, want.path+" ") {
				found = true
				for _, s := range []string{"not loaded", want.why, "chmod go-w " + want.path} {
					if !strings.Contains(f.Message, s) {
						t.Errorf("warning for %s lacks %q: %s", want.path, s, f.Message)
					}
				}
			}
		}
		if !found {
			t.Errorf("no warning names %s; early frames %+v", want.path, p.early)
		}
	}
	if len(p.early) != 5 {
		t.Errorf("%d frames before ready, want the 5 refusals: %+v", len(p.early), p.early)
	}
	wantResult("1")(t, p.run("GOOD"))
	if entries, _ := os.ReadDir(marker); len(entries) != 0 {
		t.Errorf("refused modules ran: %v", entries)
	}
}

func pyQuote(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}

// TestModuleOutputAtLoad: no cell exists while extension modules load, so
// what one shows (display(), get_ipython().run_cell's value or error,
// input()) cannot be a frame of a cell, whose id names it; each becomes a
// warning without id that names the module and carries its text, as what
// a module prints does, and a clear_output is dropped. The session then
// runs as usual, in both modes.
func TestModuleOutputAtLoad(t *testing.T) {
	code := "display('shown at load')\n" +
		"from IPython.display import clear_output\nclear_output()\n" +
		"get_ipython().run_cell('40 + 2')\n" +
		"get_ipython().run_cell('1/0')\n" +
		"try:\n    input('name? ')\nexcept Exception:\n    pass\n" +
		"LOADED = 1\n"
	for _, mode := range []struct {
		name string
		env  []string
		want []string // texts the warnings carry
	}{
		{"runner", nil, []string{"a display came at start-up from extension module", "'shown at load'", "42", "input() fails", "'name? '"}},
		{"full IPython", []string{"EVALHOST_IPYTHON=1"}, []string{"'shown at load'", "42", "an error came at start-up", "ZeroDivisionError", "'name? '"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			dir := t.TempDir()
			path := writeFile(t, dir, "shows.py", code)
			p := start(t, startOpts{modules: []string{dir}, env: mode.env})
			var texts []string
			for _, f := range p.early {
				if f.Type != frames.TypeWarning || f.ID != "" {
					t.Errorf("frame before ready: %+v, want only warnings without id", f)
					continue
				}
				if !strings.Contains(f.Message, path) {
					t.Errorf("warning does not name the module %s: %s", path, f.Message)
				}
				texts = append(texts, f.Message)
			}
			all := strings.Join(texts, "\n")
			for _, want := range mode.want {
				if !strings.Contains(all, want) {
					t.Errorf("no warning carries %q; warnings %q", want, texts)
				}
			}
			if strings.Contains(all, "clear_output") {
				t.Errorf("a clear_output was reported: %q", texts)
			}
			wantResult("1")(t, p.run("LOADED"))
		})
	}
}
