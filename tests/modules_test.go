package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// nobody stands for the other local user (the tester's mallory).
const nobody = 65534

// TestModulesPlantedInSharedCwd is the tester's attack: in a directory
// anyone may write (/tmp), another user makes .evalhost and links its
// modules to a package root owns (http, whose server.py serves / when run
// as __main__). `evalhost run` there must run none of it, with either
// backend, and say on stderr what it refused and why; a module of the
// user's own that raises is still a warning (the gateway backend used to
// run the planted modules unchecked and show no warning at all).
func TestModulesPlantedInSharedCwd(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("planting files as another user needs root")
	}
	for _, backend := range []string{"runner", "gateway"} {
		t.Run(backend, func(t *testing.T) {
			if backend == "gateway" {
				testkit.NeedModuleIn(t, "python3", "kernel_gateway, ipykernel", "jupyter_kernel_gateway ipykernel")
			}
			root := t.TempDir()
			shared := filepath.Join(root, "tmp")
			mkdirAs(t, shared, 0o777|os.ModeSticky, 0)
			mark := filepath.Join(root, "ran")
			pkg := filepath.Join(root, "usr", "lib", "http")
			mkdirAs(t, pkg, 0o755, 0)
			writeAs(t, filepath.Join(pkg, "server.py"), "open("+pyq(mark)+", 'w').close()\n", 0)
			// mallory: mkdir /tmp/.evalhost && ln -s /usr/lib/python3/http /tmp/.evalhost/modules
			mkdirAs(t, filepath.Join(shared, ".evalhost"), 0o755, nobody)
			if err := os.Symlink(pkg, filepath.Join(shared, ".evalhost", "modules")); err != nil {
				t.Fatal(err)
			}
			if err := os.Lchown(filepath.Join(shared, ".evalhost", "modules"), nobody, nobody); err != nil {
				t.Fatal(err)
			}
			home := t.TempDir()
			mkdirAs(t, filepath.Join(home, "modules"), 0o700, 0)
			writeAs(t, filepath.Join(home, "modules", "mine.py"), "MINE = 'mine'\n", 0)
			writeAs(t, filepath.Join(home, "modules", "oops.py"), "raise RuntimeError('oops at load')\n", 0)

			cmd := exec.Command(binary, "run", "--backend", backend, "-c", "print(MINE)")
			cmd.Dir = shared
			cmd.Env = append(os.Environ(), "EVALHOST_HOME="+home)
			if backend == "gateway" {
				t.Cleanup(func() {
					stop := exec.Command(binary, "gateway", "stop")
					stop.Env = cmd.Env
					stop.Run()
				})
			}
			stdout, stderr, code := runCaptured(t, cmd, false)
			if _, err := os.Stat(mark); err == nil {
				t.Fatalf("the planted module ran (stderr %q)", stderr)
			}
			if code != 0 || stdout != "mine\n" {
				t.Errorf("exit %d, stdout %q; want 0 and the user's own module loaded; stderr %q", code, stdout, stderr)
			}
			modules := filepath.Join(shared, ".evalhost", "modules")
			for _, want := range []string{
				"[warning: extension module dir " + modules + " and its modules were not loaded: the directory " +
					filepath.Join(shared, ".evalhost") + " that holds it is owned by uid 65534",
				"oops.py", "RuntimeError", "oops at load",
			} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
		})
	}
}

func mkdirAs(t *testing.T, dir string, mode os.FileMode, uid int) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(dir, uid, uid); err != nil {
		t.Fatal(err)
	}
}

func writeAs(t *testing.T, path, content string, uid int) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(path, uid, uid); err != nil {
		t.Fatal(err)
	}
}

func pyq(s string) string {
	return "'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", `\'`) + "'"
}
