package testkit

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLeaderExits: the script's process has a zombie leader while its
// other thread runs, and ends with exit 0 when its stdin closes.
func TestLeaderExits(t *testing.T) {
	cmd, stdin := StartLeaderExits(t, "")
	WaitState(t, cmd.Process.Pid, 'Z')
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("ended with %v, want its thread's exit 0", err)
	}
}

// TestLeaderExitsIsShared: the script lives here alone; copies of it in
// other packages' tests (internal/proctree's and internal/leakcheck's had
// one each) drift apart.
func TestLeaderExitsIsShared(t *testing.T) {
	const mark = "CDLL(None).syscall(" // its leader's own exit
	root, home := filepath.Join("..", ".."), filepath.Join("..", "..", "internal", "testkit")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && p != root && (p == home || d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(p, ".go"):
			return nil
		}
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), mark) {
			t.Errorf("%s holds a copy of testkit.LeaderExits: use testkit.StartLeaderExits", p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
