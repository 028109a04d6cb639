package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/trustdir"
)

// TestModulesOfSafeDirectory: a project another user owns has its modules
// refused, the refusal saying how to list it as a safe directory; listed,
// its owner's modules run (runner.py holds each to the owner it had when
// judged), while a third user's module in it is still refused, and one
// whose owner changed since it was judged does not run.
func TestModulesOfSafeDirectory(t *testing.T) {
	cwd := t.TempDir()
	mods := filepath.Join(cwd, ".evalhost", "modules")
	if err := os.MkdirAll(mods, 0o755); err != nil {
		t.Fatal(err)
	}
	chown(t, writeFile(t, mods, "team.py", "TEAM = 'team'\n"), nobody)
	chown(t, writeFile(t, mods, "later.py", "LATER = 1\n"), nobody)
	chown(t, writeFile(t, mods, "stranger.py", "STRANGER = 1\n"), 54321)
	for _, d := range []string{mods, filepath.Dir(mods), cwd} {
		chown(t, d, nobody)
	}
	list := filepath.Join(t.TempDir(), "safe-directories")
	places := []ModulePlace{{Base: cwd, Rel: filepath.Join(".evalhost", "modules"), Safe: trustdir.SafeFile(list)}}

	found, refused := FindModules(places)
	if len(found) != 0 || len(refused) != 1 {
		t.Fatalf("unlisted: FindModules = %+v, %v; want the dir refused", found, refused)
	}
	for _, want := range []string{"extension module dir " + mods + " and its modules were not loaded",
		"the directory " + cwd + " above it is owned by uid 65534",
		"if you trust uid 65534 with " + cwd + ", list it as a safe directory: echo " + cwd + " >> " + list} {
		if !strings.Contains(refused[0].Error(), want) {
			t.Errorf("refusal lacks %q: %v", want, refused[0])
		}
	}

	if err := os.WriteFile(list, []byte(cwd+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	places[0].Safe = trustdir.SafeFile(list)
	found, refused = FindModules(places)
	if len(found) != 2 || len(refused) != 1 || !strings.Contains(refused[0].Error(), "stranger.py was not loaded: it is owned by uid 54321") {
		t.Fatalf("listed: FindModules = %+v, %v; want team.py and later.py, stranger.py refused", found, refused)
	}
	if strings.Contains(refused[0].Error(), "echo ") {
		t.Errorf("a third user's module: the refusal advises a listing that cannot help: %v", refused[0])
	}
	if src, err := found[1].Source(); err != nil || string(src) != "TEAM = 'team'\n" {
		t.Errorf("Source() = %q, %v; want team.py's code", src, err)
	}
	chown(t, filepath.Join(mods, "later.py"), 54321)
	p := start(t, startOpts{entries: found})
	wantResult("'team'")(t, p.run("TEAM"))
	if len(p.early) != 1 || !strings.Contains(p.early[0].Message, "later.py was not loaded: it is owned by uid 54321") {
		t.Errorf("frames before ready %+v, want later.py refused for its new owner", p.early)
	}
}
