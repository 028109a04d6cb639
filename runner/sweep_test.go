package runner

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// killedWriterEnv is what a helper process (this test binary) starts to
// write, holding the cache's lock as Path does, then waits to be killed:
// "file:PATH", a file replaceFile replaces; "copy:DIR", a first copy
// writeCopy writes into a cache dir.
// With finishEnv set, it finishes the write when its stdin closes (the
// file renamed over PATH, the copy into place) and exits 0, or 1 when
// that fails.
const (
	killedWriterEnv = "RUNNER_TEST_KILLED_WRITER"
	finishEnv       = "RUNNER_TEST_FINISH"
)

func killedWriter(what string) {
	var name string
	var err error
	var finish func() error
	cache := strings.TrimPrefix(what, "copy:")
	path, file := strings.CutPrefix(what, "file:")
	if file {
		cache = filepath.Dir(filepath.Dir(path))
	}
	// As Path writes: holding the cache's lock.
	if _, _, err := lockCache(cache); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if file {
		var f *os.File
		if f, err = newTemp(path); err == nil {
			f.WriteString("half of it")
			name = f.Name()
			finish = func() error {
				_, err := f.WriteAt([]byte(embedded(filepath.Base(path))), 0)
				if cerr := f.Close(); err == nil {
					err = cerr
				}
				if err == nil {
					err = os.Rename(name, path)
				}
				return err
			}
		}
	} else {
		// Part way through: its last file not written yet.
		last := embeddedFiles[len(embeddedFiles)-1]
		if name, err = writeCopy(cache); err == nil {
			err = os.Remove(filepath.Join(name, last.name))
		}
		finish = func() error {
			if err := os.WriteFile(filepath.Join(name, last.name), []byte(last.data), 0o600); err != nil {
				return err
			}
			dir := filepath.Join(cache, "runner-"+Hash())
			if err := os.Rename(name, dir); err != nil && ownDir(dir, true) != nil {
				return err
			}
			return nil
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println(filepath.Base(name))
	io.Copy(io.Discard, os.Stdin) // until killed
	if os.Getenv(finishEnv) == "" {
		os.Exit(3)
	}
	if err := finish(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// startWriter runs a helper that has begun writing what (killedWriterEnv);
// it returns the helper and the name of its temporary file or directory.
func startWriter(t *testing.T, what string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), killedWriterEnv+"="+what)
	_, name, err := launchWriter(t, cmd)
	if err != nil {
		t.Fatalf("the writer said no temporary file: %v", err)
	}
	return cmd, name
}

// errNoStart is launchWriter's error when cmd did not start.
var errNoStart = errors.New("the writer did not start")

// launchWriter starts cmd, a writer helper, and returns its stdin and the
// name of its temporary file or directory (the line it prints first);
// the test's cleanup ends it.
func launchWriter(t *testing.T, cmd *exec.Cmd) (io.WriteCloser, string, error) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("%w: %w", errNoStart, err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() })
	name, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		return stdin, "", err
	}
	return stdin, name[:len(name)-1], nil
}

// A start that repairs the runner dir removes what a writer killed
// (SIGKILL) before its rename left there, and nothing else: not a name of
// another form (an older evalhost's, which takes no lock, may be writing
// it), not what is not a regular file of this user's, not a link's target.
// (A live writer holds the lock: sweep_linux_test.go.)
func TestPathSweepsKilledWritersFiles(t *testing.T) {
	cache := t.TempDir()
	dir := filepath.Dir(mustPath(t, cache))
	killed, leftover := startWriter(t, "file:"+filepath.Join(dir, "core.py"))
	killed.Process.Signal(syscall.SIGKILL)
	killed.Wait()
	dead := strconv.Itoa(killed.Process.Pid)

	kept := []struct{ name, why string }{
		{".tmp-core.py-12345", "no pid in the name (an older evalhost's)"},
		{"core.py." + dead + "-1", "not a temporary file's name"},
		{".tmp-core.py." + dead + "x-1", "no pid in the name"},
		{".tmp-dir." + dead + "-1", "a directory"},
		{".tmp-link." + dead + "-1", "a symbolic link"},
	}
	for _, k := range kept[:3] {
		if err := os.WriteFile(filepath.Join(dir, k.name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, kept[3].name), 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "target")
	os.WriteFile(target, nil, 0o600)
	if err := os.Symlink(target, filepath.Join(dir, kept[4].name)); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		other := ".tmp-core.py." + dead + "-2"
		if err := os.WriteFile(filepath.Join(dir, other), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		chown(t, filepath.Join(dir, other), nobody)
		kept = append(kept, struct{ name, why string }{other, "another user's"})
	}

	// The killed write left core.py as it was: damaged, so repaired now.
	if err := os.WriteFile(filepath.Join(dir, "core.py"), []byte("damaged"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustPath(t, cache)
	if _, err := os.Lstat(filepath.Join(dir, leftover)); err == nil {
		t.Errorf("the killed writer's %s is still there after a repair", leftover)
	}
	for _, k := range kept {
		if _, err := os.Lstat(filepath.Join(dir, k.name)); err != nil {
			t.Errorf("%s was removed, but %s: %v", k.name, k.why, err)
		}
	}
	if _, err := os.Stat(target); err != nil {
		t.Errorf("the link's target is gone: %v", err)
	}
	checkCopy(t, dir)
}

// A start that makes the runner dir afresh removes the copy a start killed
// (SIGKILL) before its rename left in the cache dir, and a copy moved
// aside whose mover was killed, without following a link in either; what
// is not a directory of this user's stays.
func TestPathSweepsKilledCopies(t *testing.T) {
	cache := t.TempDir()
	killed, leftover := startWriter(t, "copy:"+cache)
	killed.Process.Signal(syscall.SIGKILL)
	killed.Wait()
	dead := strconv.Itoa(killed.Process.Pid)
	outside := t.TempDir()
	target := filepath.Join(outside, "target")
	os.WriteFile(target, nil, 0o600)
	aside := filepath.Join(cache, ".runner-old."+dead+"-1")
	if err := os.MkdirAll(filepath.Join(aside, "old"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, link := range []string{filepath.Join(aside, "old", "dir"), filepath.Join(cache, leftover, "dir")} {
		if err := os.Symlink(outside, link); err != nil {
			t.Fatal(err)
		}
	}
	file := ".runner-tmp." + dead + "-2"
	if err := os.WriteFile(filepath.Join(cache, file), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := ".runner-tmp." + dead + "-3"
	if err := os.Symlink(outside, filepath.Join(cache, link)); err != nil {
		t.Fatal(err)
	}
	mustPath(t, cache)
	for _, gone := range []string{leftover, filepath.Base(aside)} {
		if _, err := os.Lstat(filepath.Join(cache, gone)); err == nil {
			t.Errorf("%s, of a killed start, is still there", gone)
		}
	}
	for _, kept := range []string{file, link} {
		if _, err := os.Lstat(filepath.Join(cache, kept)); err != nil {
			t.Errorf("%s was removed: %v", kept, err)
		}
	}
	if _, err := os.Stat(target); err != nil {
		t.Errorf("a file a link in a leftover led to is gone: %v", err)
	}
	checkCopy(t, filepath.Join(cache, "runner-"+Hash()))
}

// The cache's lock file is not trusted by its name: a link there, or a
// file of another user's (put there while the cache dir was open to
// them), is replaced, not followed or held.
func TestPathLockFileIsItsOwn(t *testing.T) {
	for _, tt := range []struct {
		name  string
		plant func(t *testing.T, path string) (check func())
	}{
		{"a link", func(t *testing.T, path string) func() {
			target := filepath.Join(t.TempDir(), "target")
			os.WriteFile(target, []byte("theirs"), 0o600)
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
			return func() {
				if got, _ := os.ReadFile(target); string(got) != "theirs" {
					t.Errorf("the link's target was changed: %q", got)
				}
			}
		}},
		{"another user's file", func(t *testing.T, path string) func() {
			if err := os.WriteFile(path, nil, 0o666); err != nil {
				t.Fatal(err)
			}
			chown(t, path, nobody)
			return func() {}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cache := t.TempDir()
			check := tt.plant(t, filepath.Join(cache, lockName))
			mustPath(t, cache)
			check()
			fi, err := os.Lstat(filepath.Join(cache, lockName))
			if err != nil || !fi.Mode().IsRegular() || !mine(fi) {
				t.Errorf("the lock file is %v (%v), want a regular file of this user's", fi, err)
			}
		})
	}
}

func TestTempNameWriter(t *testing.T) {
	for _, tt := range []struct {
		name string
		pid  int
		ok   bool
	}{
		{"core.py.4242-123456", 4242, true},
		{"ipy_magics.py.7-1", 7, true},
		{".4242-1", 4242, true},
		{"core.py-123456", 0, false},
		{"core.py.-1", 0, false},
		{"core.py.+5-1", 0, false},
		{"core.py.0-1", 0, false},
		{"core.py.4242", 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pid, ok := writer(tt.name)
			if pid != tt.pid || ok != tt.ok {
				t.Errorf("writer(%q) = %d, %v; want %d, %v", tt.name, pid, ok, tt.pid, tt.ok)
			}
		})
	}
}
