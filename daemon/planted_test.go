//go:build unix

package daemon

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A link planted where the log goes (while the directory was open to
// others) is not followed: the process's stderr went to wherever it
// pointed, such as the user's ~/.bashrc.
func TestSpawnRefusesALinkedLog(t *testing.T) {
	paths := PathsFor(t.TempDir())
	if err := ensureDir(paths.Dir); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "bashrc")
	if err := os.WriteFile(target, []byte("# mine\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, paths.Log); err != nil {
		t.Fatal(err)
	}
	cfg := DialConfig{Paths: paths, Version: "test", Command: func() *exec.Cmd {
		return exec.Command("sh", "-c", "echo from-the-process >&2; echo ready >&3")
	}}
	err := spawn(context.Background(), cfg)
	var unsafe *UnsafeError
	if !errors.As(err, &unsafe) {
		t.Errorf("spawn with a linked log: %v, want an *UnsafeError", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "# mine\n" {
		t.Errorf("the link's target was written: %q", b)
	}
}

// A directory of the user's that others could write is tightened, but
// what another user put in it meanwhile is refused, not used.
func TestEnsureDirRefusesWhatOthersPutInIt(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to make a file of another user's")
	}
	paths := PathsFor(t.TempDir())
	if err := ensureDir(paths.Dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(paths.Dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/etc/passwd", paths.Log); err != nil {
		t.Fatal(err)
	}
	if err := os.Lchown(paths.Log, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	err := ensureDir(paths.Dir)
	var unsafe *UnsafeError
	if !errors.As(err, &unsafe) || unsafe.Path != paths.Log {
		t.Fatalf("ensureDir of an open directory with another user's link: %v, want an *UnsafeError naming %s", err, paths.Log)
	}
	if fi, _ := os.Stat(paths.Dir); fi.Mode().Perm() != 0o700 {
		t.Errorf("the directory is left %o", fi.Mode().Perm())
	}
	if err := ensureDir(paths.Dir); !errors.As(err, &unsafe) {
		t.Errorf("ensureDir again, once tightened: %v; the link is still there", err)
	}
}
