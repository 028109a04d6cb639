//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package flock

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// holdEnv asks TestMain to be a holder: lock the file the variable names,
// say "locked" and hold it until stdin ends.
const holdEnv = "FLOCK_TEST_HOLD"

func TestMain(m *testing.M) {
	if path := os.Getenv(holdEnv); path != "" {
		os.Exit(hold(path))
	}
	os.Exit(m.Run())
}

func hold(path string) int {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err == nil {
		err = Lock(f)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Println("locked")
	bufio.NewReader(os.Stdin).ReadString('\n')
	return 0
}

func open(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestTryLock(t *testing.T) {
	tests := []struct {
		name   string
		before func(t *testing.T, path string, f *os.File) // what holds the file first
		want   error
	}{
		{"free", func(*testing.T, string, *os.File) {}, nil},
		{"held by another open in this process", func(t *testing.T, path string, _ *os.File) {
			if err := Lock(open(t, path)); err != nil {
				t.Fatal(err)
			}
		}, ErrLocked},
		{"held by this open already", func(t *testing.T, _ string, f *os.File) {
			if err := Lock(f); err != nil {
				t.Fatal(err)
			}
		}, nil},
		{"released by Unlock", func(t *testing.T, path string, _ *os.File) {
			g := open(t, path)
			if err := Lock(g); err != nil {
				t.Fatal(err)
			}
			if err := Unlock(g); err != nil {
				t.Fatal(err)
			}
		}, nil},
		{"released by Close", func(t *testing.T, path string, _ *os.File) {
			g := open(t, path)
			if err := Lock(g); err != nil {
				t.Fatal(err)
			}
			g.Close()
		}, nil},
		{"file closed", func(_ *testing.T, _ string, f *os.File) { f.Close() }, os.ErrClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "lock")
			f := open(t, path)
			tt.before(t, path, f)
			err := TryLock(f)
			if tt.want == nil && err != nil || !errors.Is(err, tt.want) {
				t.Fatalf("TryLock: %v, want %v", err, tt.want)
			}
			if tt.want == os.ErrClosed && (errors.Is(err, ErrLocked) || errors.Is(err, ErrUnsupported)) {
				t.Fatalf("TryLock of a closed file: %v matches a sentinel", err)
			}
		})
	}
}

func TestUnlockIsSafeTwiceAndAfterClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lock")
	f, g := open(t, path), open(t, path)
	if err := Unlock(f); err != nil {
		t.Fatalf("Unlock of a file never locked: %v", err)
	}
	if err := Lock(f); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := Unlock(f); err != nil {
			t.Fatalf("Unlock %d: %v", i+1, err)
		}
	}
	if err := TryLock(g); err != nil {
		t.Fatalf("TryLock after Unlock: %v", err)
	}
	g.Close()
	if err := Unlock(g); err != nil {
		t.Fatalf("Unlock after Close: %v", err)
	}
}

// The errnos flock may return, given on demand: a real EINTR cannot be had
// deterministically (Go's handlers have SA_RESTART, so the kernel restarts
// an interrupted flock itself).
func TestErrnos(t *testing.T) {
	tests := []struct {
		name    string
		errnos  []error // returned by successive calls; the last repeats
		unlock  bool
		want    []error // what the error matches; nil: no error
		notWant []error
		calls   int
	}{
		{"ok", []error{nil}, false, nil, nil, 1},
		{"EINTR retried", []error{syscall.EINTR, syscall.EINTR, syscall.EINTR, nil}, false, nil, nil, 4},
		{"EINTR then held", []error{syscall.EINTR, syscall.EWOULDBLOCK}, false, []error{ErrLocked}, []error{ErrUnsupported}, 2},
		{"EWOULDBLOCK", []error{syscall.EWOULDBLOCK}, false, []error{ErrLocked}, []error{ErrUnsupported}, 1},
		{"ENOLCK", []error{syscall.ENOLCK}, false, []error{ErrUnsupported, syscall.ENOLCK}, []error{ErrLocked}, 1},
		{"ENOSYS", []error{syscall.ENOSYS}, false, []error{ErrUnsupported, syscall.ENOSYS}, nil, 1},
		{"EOPNOTSUPP", []error{syscall.EOPNOTSUPP}, false, []error{ErrUnsupported, syscall.EOPNOTSUPP}, nil, 1},
		{"ENOTSUP", []error{syscall.ENOTSUP}, false, []error{ErrUnsupported, syscall.ENOTSUP}, nil, 1},
		{"EBADF", []error{syscall.EBADF}, false, []error{syscall.EBADF}, []error{ErrUnsupported, ErrLocked}, 1},
		{"unlock where unsupported", []error{syscall.ENOLCK}, true, nil, nil, 1},
		{"unlock EINTR retried", []error{syscall.EINTR, nil}, true, nil, nil, 2},
		{"unlock EBADF", []error{syscall.EBADF}, true, []error{syscall.EBADF}, nil, 1},
	}
	f := open(t, filepath.Join(t.TempDir(), "lock"))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			flockCall = func(int, int) error {
				err := tt.errnos[min(calls, len(tt.errnos)-1)]
				calls++
				return err
			}
			t.Cleanup(func() { flockCall = syscall.Flock })
			var err error
			if tt.unlock {
				err = Unlock(f)
			} else {
				err = TryLock(f)
			}
			if (err == nil) != (tt.want == nil) {
				t.Fatalf("error %v, want one matching %v", err, tt.want)
			}
			for _, w := range tt.want {
				if !errors.Is(err, w) {
					t.Errorf("error %v does not match %v", err, w)
				}
			}
			for _, w := range tt.notWant {
				if errors.Is(err, w) {
					t.Errorf("error %v matches %v", err, w)
				}
			}
			if calls != tt.calls {
				t.Errorf("flock called %d times, want %d", calls, tt.calls)
			}
		})
	}
}

// Another process's lock: TryLock fails while it holds it, and Lock gets it
// once the holder ends, by exit or by SIGKILL.
func TestContentionWithAnotherProcess(t *testing.T) {
	tests := []struct {
		name string
		end  func(cmd *exec.Cmd, stdin *os.File)
	}{
		{"holder exits", func(_ *exec.Cmd, stdin *os.File) { stdin.Close() }},
		{"holder killed", func(cmd *exec.Cmd, _ *os.File) { cmd.Process.Kill() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "lock")
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), holdEnv+"="+path)
			cmd.Stdin, cmd.Stderr = r, os.Stderr
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			r.Close()
			defer cmd.Wait()
			defer cmd.Process.Kill()
			if line, err := bufio.NewReader(out).ReadString('\n'); line != "locked\n" {
				t.Fatalf("holder said %q (%v)", line, err)
			}
			f := open(t, path)
			if err := TryLock(f); !errors.Is(err, ErrLocked) {
				t.Fatalf("TryLock while another process holds the lock: %v, want ErrLocked", err)
			}
			got := make(chan error, 1)
			go func() { got <- Lock(f) }()
			tt.end(cmd, w)
			if err := <-got; err != nil {
				t.Fatalf("Lock after the holder ended: %v", err)
			}
		})
	}
}
