//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package notebook

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/evalhost/evalhost/internal/flock"
)

// writerEnv makes this test binary a writer of the notebook it names
// (writerLockEnv set: holding its Lock) that says its temp file's name
// and then blocks, mid-save, until killed.
const (
	writerEnv     = "NOTEBOOK_TEST_WRITER"
	writerLockEnv = "NOTEBOOK_TEST_WRITER_LOCKS"
)

func init() {
	if path := os.Getenv(writerEnv); path != "" {
		os.Exit(blockedWriter(path, os.Getenv(writerLockEnv) != ""))
	}
}

func blockedWriter(path string, lock bool) int {
	if lock {
		if _, err := Lock(context.Background(), path); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
	}
	nb, err := Load(path)
	if err == nil {
		err = nb.Insert(0, Code, "unfinished")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	tempCreated = func(name string) {
		fmt.Println(name)
		select {} // killed here
	}
	fmt.Fprintln(os.Stderr, "saved, not blocked:", nb.Save(path))
	return 2
}

// startWriter starts a writer of path and returns its temp file, made and
// being written when it returns.
func startWriter(t *testing.T, path string, lock bool) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), writerEnv+"="+path)
	if lock {
		cmd.Env = append(cmd.Env, writerLockEnv+"=1")
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the writer said %q: %v", line, err)
	}
	return cmd, line[:len(line)-1]
}

func kill(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
}

// forgetSweeps makes the next Lock of every notebook sweep again, as the
// first Lock of another process would.
func forgetSweeps() { swept.Clear() }

func lockAndUnlock(t *testing.T, path string) {
	t.Helper()
	lk, err := Lock(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := lk.Unlock(); err != nil {
		t.Fatal(err)
	}
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// TestLockRemovesAKilledWritersTemp: a save SIGKILLed after making its
// temp file leaves it; the next Lock of the notebook removes it, and the
// notebook is as it was.
func TestLockRemovesAKilledWritersTemp(t *testing.T) {
	tests := []struct {
		name string
		via  func(t *testing.T, path string) string // the name the writer and Lock use
	}{
		{"by its name", func(_ *testing.T, path string) string { return path }},
		{"through a symlink", func(t *testing.T, path string) string {
			link := filepath.Join(t.TempDir(), "link.ipynb")
			if err := os.Symlink(path, link); err != nil {
				t.Fatal(err)
			}
			return link
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "n.ipynb")
			orig := readFile(t, "testdata/basic.ipynb")
			if err := os.WriteFile(path, orig, 0o644); err != nil {
				t.Fatal(err)
			}
			name := tt.via(t, path)
			cmd, temp := startWriter(t, name, true)
			kill(t, cmd)
			if !exists(temp) {
				t.Fatalf("the killed writer left no temp file %s: the test proves nothing", temp)
			}
			lockAndUnlock(t, name)
			if exists(temp) {
				t.Errorf("Lock left the killed writer's temp file %s", temp)
			}
			if got := readFile(t, path); string(got) != string(orig) {
				t.Errorf("the notebook changed")
			}
			assertNoTempFiles(t, filepath.Dir(path))
		})
	}
}

// TestLockKeepsALiveWritersTemp: a Go program that saves without the Lock
// holds its temp file's flock while it writes; Lock leaves that file, and
// removes it once the writer is killed.
func TestLockKeepsALiveWritersTemp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "n.ipynb")
	if err := os.WriteFile(path, readFile(t, "testdata/basic.ipynb"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, temp := startWriter(t, path, false)
	lockAndUnlock(t, path)
	if !exists(temp) {
		t.Fatalf("Lock removed the temp file %s of a writer that lives", temp)
	}
	kill(t, cmd)
	forgetSweeps()
	lockAndUnlock(t, path)
	if exists(temp) {
		t.Errorf("Lock left the killed writer's temp file %s", temp)
	}
}

// TestLockSweepsOncePerProcess: the sweep lists the notebook's directory,
// ~55 ms for 100,000 files, and nb run locks twice per cell; only the
// first Lock of a notebook in a process sweeps (a leftover made after it
// stays), and a notebook of its own, in the same directory, is swept
// on its own first Lock.
func TestLockSweepsOncePerProcess(t *testing.T) {
	dir := t.TempDir()
	path, other := filepath.Join(dir, "n.ipynb"), filepath.Join(dir, "m.ipynb")
	for _, p := range []string{path, other} {
		if err := os.WriteFile(p, readFile(t, "testdata/basic.ipynb"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	leftover := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	first := leftover(".n.ipynb.1.tmp")
	lockAndUnlock(t, path)
	if exists(first) {
		t.Fatalf("the first Lock left %s", first)
	}
	second := leftover(".n.ipynb.2.tmp")
	ofOther := leftover(".m.ipynb.3.tmp")
	lockAndUnlock(t, path)
	if !exists(second) {
		t.Errorf("a second Lock of the notebook in this process swept its directory again")
	}
	lockAndUnlock(t, other)
	if exists(ofOther) {
		t.Errorf("the first Lock of another notebook did not sweep its leftovers")
	}
}

// TestLockLeavesWhatIsNotALeftover: only a regular file of this user's,
// named as this notebook's temp files are, is removed; a link so named is
// neither followed nor removed.
func TestLockLeavesWhatIsNotALeftover(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "n.ipynb")
	if err := os.WriteFile(path, readFile(t, "testdata/basic.ipynb"), 0o644); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "precious")
	if err := os.WriteFile(outside, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := func(name string) error { return os.WriteFile(filepath.Join(dir, name), nil, 0o600) }
	tests := []struct {
		name, file string
		make       func(name string) error
		removed    bool
	}{
		{"leftover", ".n.ipynb.123.tmp", file, true},
		{"other notebook's", ".n.ipynb.x.123.tmp", file, false},
		{"no digits", ".n.ipynb..tmp", file, false},
		{"not digits", ".n.ipynb.12a.tmp", file, false},
		{"not hidden", "n.ipynb.123.tmp", file, false},
		{"other suffix", ".n.ipynb.123.tmpx", file, false},
		{"symlink", ".n.ipynb.456.tmp", func(name string) error { return os.Symlink(outside, filepath.Join(dir, name)) }, false},
		{"directory", ".n.ipynb.789.tmp", func(name string) error { return os.Mkdir(filepath.Join(dir, name), 0o700) }, false},
		{"fifo", ".n.ipynb.1011.tmp", func(name string) error { return syscall.Mkfifo(filepath.Join(dir, name), 0o600) }, false},
		{"another user's", ".n.ipynb.1213.tmp", func(name string) error {
			if os.Getuid() != 0 {
				return nil // only root can give a file away; then it is left as any other user's would be
			}
			if err := file(name); err != nil {
				return err
			}
			return os.Lchown(filepath.Join(dir, name), 65534, 65534)
		}, false},
	}
	for _, tt := range tests {
		if err := tt.make(tt.file); err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
	}
	lockAndUnlock(t, path)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "another user's" && os.Getuid() != 0 {
				t.Skip("needs root to make another user's file")
			}
			if got := exists(filepath.Join(dir, tt.file)); got == tt.removed {
				t.Errorf("%s: there after Lock %v, want %v", tt.file, got, !tt.removed)
			}
		})
	}
	if !exists(outside) {
		t.Errorf("the symlink's target was removed")
	}
}

func TestIsTempOf(t *testing.T) {
	base := "n.ipynb"
	for _, name := range []string{".n.ipynb.1.tmp", ".n.ipynb.4294967295.tmp"} {
		if !isTempOf(name, base) {
			t.Errorf("isTempOf(%q) = false", name)
		}
	}
	// What createTemp makes must match.
	f, err := createTemp(filepath.Join(t.TempDir(), base))
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	if names := tempsOf([]string{filepath.Base(f.Name())}, base); !slices.Equal(names, []string{filepath.Base(f.Name())}) {
		t.Errorf("createTemp's %s is not recognised", f.Name())
	}
}

// TestLockKeepsATempItCannotLock: only a temp file whose flock Lock gets is
// removed. NFS emulates flock with fcntl locks, which need the file open
// for writing: a read-only open's lock fails with EBADF whether or not a
// writer holds it, and the file must then be kept.
func TestLockKeepsATempItCannotLock(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		removed bool
	}{
		{"lock had", nil, true},
		{"EBADF, as NFS for a read-only open", &os.SyscallError{Syscall: "flock", Err: syscall.EBADF}, false},
		{"held", flock.ErrLocked, false},
		{"no locks", flock.ErrUnsupported, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "n.ipynb")
			if err := os.WriteFile(path, readFile(t, "testdata/basic.ipynb"), 0o644); err != nil {
				t.Fatal(err)
			}
			temp := filepath.Join(dir, ".n.ipynb.123.tmp")
			if err := os.WriteFile(temp, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			tryLock = func(f *os.File) error {
				if tt.err != nil {
					return tt.err
				}
				return flock.TryLock(f)
			}
			t.Cleanup(func() { tryLock = flock.TryLock })
			lockAndUnlock(t, path)
			if got := !exists(temp); got != tt.removed {
				t.Errorf("removed %v, want %v", got, tt.removed)
			}
		})
	}
}

// TestLockSparesASaveWithoutTheLock: a save that does not hold the Lock
// (a Go program's, or CheckWritable's probe) keeps its temp file flocked
// from its creation to its rename or removal, so a Lock's sweep in
// between, after the temp file was closed, neither takes it nor fails the
// save.
func TestLockSparesASaveWithoutTheLock(t *testing.T) {
	tests := []struct {
		name string
		save func(nb *Notebook, path string) error
	}{
		{"Save", (*Notebook).Save},
		{"SaveUnsynced", (*Notebook).SaveUnsynced},
		{"CheckWritable", func(_ *Notebook, path string) error { return CheckWritable(path) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "n.ipynb")
			if err := os.WriteFile(path, readFile(t, "testdata/basic.ipynb"), 0o644); err != nil {
				t.Fatal(err)
			}
			nb, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := nb.Insert(0, Code, "x = 1"); err != nil {
				t.Fatal(err)
			}
			swept := false
			tempClosed = func(string) {
				forgetSweeps()
				lockAndUnlock(t, path)
				swept = true
			}
			t.Cleanup(func() { tempClosed = nil })
			if err := tt.save(nb, path); err != nil {
				t.Fatalf("the save failed: %v", err)
			}
			if !swept {
				t.Fatal("no Lock swept between the temp file's close and its rename: the test proves nothing")
			}
			assertNoTempFiles(t, filepath.Dir(path))
		})
	}
}

// TestLockSparesATempBeforeItsFlock: a sweep may take a save's new temp
// file in the instant between its creation and its flock (the sweep
// removed it, or holds its flock to remove it); the save, which does not
// hold the Lock, makes another and succeeds.
func TestLockSparesATempBeforeItsFlock(t *testing.T) {
	tests := []struct {
		name  string
		sweep func(t *testing.T, path, temp string)
	}{
		{"removed before its flock", func(t *testing.T, path, _ string) {
			forgetSweeps()
			lockAndUnlock(t, path)
		}},
		{"being removed at its flock", func(t *testing.T, _, temp string) {
			f, err := os.Open(temp)
			if err != nil {
				t.Fatal(err)
			}
			if err := flock.TryLock(f); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Remove(temp); f.Close() })
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "n.ipynb")
			if err := os.WriteFile(path, readFile(t, "testdata/basic.ipynb"), 0o644); err != nil {
				t.Fatal(err)
			}
			nb, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := nb.Insert(0, Code, "x = 1"); err != nil {
				t.Fatal(err)
			}
			calls := 0
			beforeMark = func(temp string) {
				if calls++; calls == 1 {
					tt.sweep(t, path, temp)
				}
			}
			t.Cleanup(func() { beforeMark = nil })
			if err := nb.Save(path); err != nil {
				t.Fatalf("the save failed: %v", err)
			}
			if calls < 2 {
				t.Errorf("the save used the temp file it lost")
			}
			if got, err := Load(path); err != nil || got.Len() != nb.Len() {
				t.Errorf("the notebook was not saved (%v)", err)
			}
		})
	}
}
