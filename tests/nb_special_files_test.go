//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runWithin runs c, failing the test if it has not ended within d (a read
// waiting for a FIFO's writer never ends): it is then killed, and fifo,
// when it is one, opened for writing so that nothing stays blocked on it.
func runWithin(t *testing.T, c *exec.Cmd, d time.Duration, fifo string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb strings.Builder
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case <-done:
	case <-time.After(d):
		c.Process.Kill()
		if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		<-done
		t.Fatalf("still running after %v\nstdout %q\nstderr %q", d, &out, &errb)
	}
	return out.String(), errb.String(), c.ProcessState.ExitCode()
}

// TestNotebookRunSaysWhatHoldsThePairedName: nb run of a percent script
// without -o writes the notebook paired with it only when nothing holds
// that name, and its refusal says what does when "exists" would mislead:
// a dangling symlink (ls shows it, cat says no such file), a link loop,
// another user's file (not the user's to replace or remove). A file of the
// user's own keeps the advice to name it with -o.
func TestNotebookRunSaysWhatHoldsThePairedName(t *testing.T) {
	const then = "; without -o the executed notebook of s.py goes there only when nothing is there: "
	for _, tc := range []struct {
		name  string
		make  func(t *testing.T, paired string)
		root  bool // only root gives a file to another user
		shows []string
	}{
		{name: "a file of the user's own", make: func(t *testing.T, p string) { os.WriteFile(p, []byte("{}"), 0o644) },
			shows: []string{"s.ipynb exists: without -o the executed notebook of s.py goes there only when it is new; -o s.ipynb replaces it"}},
		{name: "a dangling symlink", make: func(t *testing.T, p string) { os.Symlink("gone/s.ipynb", p) },
			shows: []string{"s.ipynb is a symlink to gone/s.ipynb, which does not exist" + then + "remove the link, or choose another -o\n"}},
		{name: "a link loop", make: func(t *testing.T, p string) { os.Symlink("s.ipynb", p) },
			shows: []string{"s.ipynb is a symlink to s.ipynb, a loop of links that leads to no file" + then + "remove the link, or choose another -o\n"}},
		{name: "another user's file", root: true, make: func(t *testing.T, p string) {
			os.WriteFile(p, []byte("{}"), 0o644)
			os.Lchown(p, 65534, 65534)
		}, shows: []string{"s.ipynb is a file of another user's, ", "(uid 65534)" + then + "choose another -o\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root && os.Geteuid() != 0 {
				t.Skip("only root gives a file to another user")
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "s.py"), []byte("# %%\nx = 1\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			paired := filepath.Join(dir, "s.ipynb")
			tc.make(t, paired)
			before, _ := os.Lstat(paired)
			cmd := command(t, "nb", "run", "s.py")
			cmd.Dir = dir
			_, stderr, code := runWithin(t, cmd, 20*time.Second, paired)
			if code != 2 {
				t.Errorf("exit %d, want 2\nstderr %q", code, stderr)
			}
			for _, w := range tc.shows {
				if !strings.Contains(stderr, "evalhost nb run: ") || !strings.Contains(stderr, w) {
					t.Errorf("stderr does not say %q\nstderr %q", w, stderr)
				}
			}
			if now, err := os.Lstat(paired); err != nil || !os.SameFile(now, before) {
				t.Errorf("s.ipynb was replaced: %v", err)
			}
		})
	}
}
