package runner

import (
	"bufio"
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
// write, then waits to be killed: "file:PATH", a file replaceFile
// replaces; "copy:DIR", a first copy writeCopy writes into a cache dir.
const killedWriterEnv = "RUNNER_TEST_KILLED_WRITER"

func killedWriter(what string) {
	var name string
	var err error
	if path, ok := strings.CutPrefix(what, "file:"); ok {
		var f *os.File
		if f, err = newTemp(path); err == nil {
			f.WriteString("half of it")
			name = f.Name()
		}
	} else {
		name, err = writeCopy(strings.TrimPrefix(what, "copy:"))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println(filepath.Base(name))
	io.Copy(io.Discard, os.Stdin) // until killed
	os.Exit(3)
}

// startWriter runs a helper that has begun writing what (killedWriterEnv);
// it returns the helper and the name of its temporary file or directory.
func startWriter(t *testing.T, what string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), killedWriterEnv+"="+what)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Process.Kill(); cmd.Wait() })
	name, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the writer said no temporary file: %v", err)
	}
	return cmd, name[:len(name)-1]
}

// A start that repairs the runner dir removes what a writer killed
// (SIGKILL) before its rename left there, and nothing else: not the file
// of a writer that still runs (another start repairing at once), not a
// name of another form, not what is not a regular file of this user's.
func TestPathSweepsKilledWritersFiles(t *testing.T) {
	cache := t.TempDir()
	dir := filepath.Dir(mustPath(t, cache))
	damage := func() {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "core.py"), []byte("damaged"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	killed, leftover := startWriter(t, "file:"+filepath.Join(dir, "core.py"))
	_, live := startWriter(t, "file:"+filepath.Join(dir, "wire.py"))
	damage()
	mustPath(t, cache)
	if _, err := os.Lstat(filepath.Join(dir, leftover)); err != nil {
		t.Fatalf("a repair removed the file of a writer that still runs: %v", err)
	}
	killed.Process.Signal(syscall.SIGKILL)
	killed.Wait()
	dead := strconv.Itoa(killed.Process.Pid)

	kept := []struct{ name, why string }{
		{live, "its writer runs"},
		{".tmp-core.py." + strconv.Itoa(os.Getpid()) + "-1", "its writer (this process) runs"},
		{".tmp-core.py-12345", "no pid in the name (an older evalhost's)"},
		{"core.py." + dead + "-1", "not a temporary file's name"},
		{".tmp-core.py." + dead + "x-1", "no pid in the name"},
		{".tmp-dir." + dead + "-1", "a directory"},
		{".tmp-link." + dead + "-1", "a symbolic link"},
	}
	for _, k := range kept[2:5] {
		if err := os.WriteFile(filepath.Join(dir, k.name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, kept[1].name), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, kept[5].name), 0o700); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(t.TempDir(), "target")
	os.WriteFile(target, nil, 0o600)
	if err := os.Symlink(target, filepath.Join(dir, kept[6].name)); err != nil {
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

	damage()
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
// aside whose mover was killed; a live writer's copy stays, and so does
// what is not a directory of this user's.
func TestPathSweepsKilledCopies(t *testing.T) {
	cache := t.TempDir()
	killed, leftover := startWriter(t, "copy:"+cache)
	_, live := startWriter(t, "copy:"+cache)
	killed.Process.Signal(syscall.SIGKILL)
	killed.Wait()
	dead := strconv.Itoa(killed.Process.Pid)
	aside := filepath.Join(cache, ".runner-old."+dead+"-1")
	if err := os.MkdirAll(filepath.Join(aside, "old"), 0o700); err != nil {
		t.Fatal(err)
	}
	file := ".runner-tmp." + dead + "-2"
	if err := os.WriteFile(filepath.Join(cache, file), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	mustPath(t, cache)
	for _, gone := range []string{leftover, filepath.Base(aside)} {
		if _, err := os.Lstat(filepath.Join(cache, gone)); err == nil {
			t.Errorf("%s, of a killed start, is still there", gone)
		}
	}
	for _, kept := range []string{live, file} {
		if _, err := os.Lstat(filepath.Join(cache, kept)); err != nil {
			t.Errorf("%s was removed: %v", kept, err)
		}
	}
	checkCopy(t, filepath.Join(cache, "runner-"+Hash()))
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
