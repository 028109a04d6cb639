package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unicode"

	"github.com/evalhost/evalhost/frames"
)

// TestModuleAdviceQuoted: the chown a refusal advises for another user's
// module, from FindModules and from runner.py, names the module as one
// shell word: the name is that user's to choose, and pasting the command
// must not run what it holds.
func TestModuleAdviceQuoted(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("giving a module to another user needs root")
	}
	cwd, marker := t.TempDir(), t.TempDir()
	mods := filepath.Join(cwd, ".evalhost", "modules")
	if err := os.MkdirAll(mods, 0o755); err != nil {
		t.Fatal(err)
	}
	name := "x$(touch pwned)'$(touch pwned)'.py"
	path := writeFile(t, mods, name, "X = 1\n")
	places := []ModulePlace{{Base: cwd, Rel: filepath.Join(".evalhost", "modules")}}
	found, _ := FindModules(places)
	if len(found) != 1 {
		t.Fatalf("FindModules = %+v, want the module", found)
	}
	chown(t, path, nobody)
	_, refused := FindModules(places)
	if len(refused) != 1 {
		t.Fatalf("refused %v, want the module", refused)
	}
	warning := lastEarlyWarning(start(t, startOpts{entries: found}))
	for _, tt := range []struct{ from, msg, after, before string }{
		{"FindModules", refused[0].Error(), "make it yours: ", "; or "},
		{"runner.py", warning, "not writable by others (", ")"},
	} {
		t.Run(tt.from, func(t *testing.T) {
			_, cmd, ok := strings.Cut(tt.msg, tt.after)
			if i := strings.LastIndex(cmd, tt.before); i >= 0 {
				cmd = cmd[:i]
			}
			if !ok || !strings.Contains(cmd, "chown") {
				t.Fatalf("no chown advised: %s", tt.msg)
			}
			chown(t, path, nobody)
			sh := exec.Command("sh", "-c", cmd)
			sh.Dir = marker
			if out, err := sh.CombinedOutput(); err != nil {
				t.Errorf("sh -c %q: %v: %s", cmd, err, out)
			}
			if entries, _ := os.ReadDir(marker); len(entries) != 0 {
				t.Errorf("sh -c %q ran a command of the module's name: %v", cmd, entries)
			}
			if fi, err := os.Stat(path); err != nil || fi.Sys().(*syscall.Stat_t).Uid != 0 {
				t.Errorf("sh -c %q: the module is not made the user's: %v", cmd, err)
			}
		})
	}
}

// TestModuleRefusalPrintable: a refused module's name is printed quoted
// when it holds a control character, by FindModules and by runner.py, so
// another user's name cannot fake a line of advice, or the terminal's.
func TestModuleRefusalPrintable(t *testing.T) {
	for _, name := range []string{"x\necho '*' >> ~|safe-directories\n.py", "x\x1b[2K\x1b[1Afake.py"} {
		cwd := t.TempDir()
		mods := filepath.Join(cwd, ".evalhost", "modules")
		if err := os.MkdirAll(mods, 0o755); err != nil {
			t.Fatal(err)
		}
		path := writeFile(t, mods, name, "X = 1\n")
		places := []ModulePlace{{Base: cwd, Rel: filepath.Join(".evalhost", "modules")}}
		found, _ := FindModules(places)
		if len(found) != 1 {
			t.Fatalf("FindModules = %+v, want the module", found)
		}
		if err := os.Chmod(path, 0o666); err != nil {
			t.Fatal(err)
		}
		_, refused := FindModules(places)
		if len(refused) != 1 {
			t.Fatalf("refused %v, want the module", refused)
		}
		warning := lastEarlyWarning(start(t, startOpts{entries: found}))
		quoted := strconv.Quote(path)
		for from, msg := range map[string]string{"FindModules": refused[0].Error(), "runner.py": warning} {
			if strings.ContainsFunc(msg, unicode.IsControl) || !strings.Contains(msg, quoted+" was not loaded") {
				t.Errorf("%s prints the name raw, or not as %s: %q", from, quoted, msg)
			}
		}
	}
}

// lastEarlyWarning is the message of the last warning frame before ready.
func lastEarlyWarning(p *proc) string {
	var warning string
	for _, f := range p.early {
		if f.Type == frames.TypeWarning {
			warning = f.Message
		}
	}
	return warning
}
