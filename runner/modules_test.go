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

// TestModuleDisplaysAtLoad: no cell exists while extension modules load, so
// what one displays (display(), get_ipython().run_cell's value) cannot be
// a display frame, whose id names its cell; each becomes a warning without
// id that carries its text, as what a module prints does. The session
// then runs as usual.
func TestModuleDisplaysAtLoad(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "shows.py", "display('shown at load')\nget_ipython().run_cell('40 + 2')\nLOADED = 1\n")
	p := start(t, startOpts{modules: []string{dir}})
	var texts []string
	for _, f := range p.early {
		if f.Type != frames.TypeWarning || f.ID != "" {
			t.Errorf("frame before ready: %+v, want only warnings without id", f)
			continue
		}
		texts = append(texts, f.Message)
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{"'shown at load'", "42"} {
		if !strings.Contains(all, want) {
			t.Errorf("no warning carries %s; warnings %q", want, texts)
		}
	}
	wantResult("1")(t, p.run("LOADED"))
}
