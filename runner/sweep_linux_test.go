package runner

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// nsPidEnv asks TestMain to be a new pid namespace's first process, which
// runs the rest of the command (this test binary again, as a writer) as
// the pid the variable names, in that namespace.
const nsPidEnv = "RUNNER_TEST_NS_PID"

func init() {
	if pid := os.Getenv(nsPidEnv); pid != "" {
		nsInit(pid) // a pid namespace's first process, which starts a writer
	}
}

// nsInit is that first process: it sets the namespace's last pid so that
// its child gets the one asked for, and passes on the child's status.
func nsInit(pid string) {
	n, err := strconv.Atoi(pid)
	if err == nil {
		err = os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(n-1)), 0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "set the namespace's next pid:", err)
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[0], os.Args[1:]...)
	cmd.Env = slicesWithout(os.Environ(), nsPidEnv+"=")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			os.Exit(ee.ExitCode())
		}
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(0)
}

func slicesWithout(env []string, prefix string) []string {
	var out []string
	for _, e := range env {
		if !strings.HasPrefix(e, prefix) {
			out = append(out, e)
		}
	}
	return out
}

// freePid is a pid no process of this namespace has.
func freePid(t *testing.T) int {
	for pid := 54321; pid < 60000; pid++ {
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			return pid
		}
	}
	t.Skip("no free pid")
	return 0
}

// startLiveWriter is startWriter with a writer that finishes its write
// when its stdin closes. With ns it runs in a new pid namespace (and user
// namespace, mapping its root to this user), under a pid that no process
// here has: as a start in a container sharing the home, or on another
// host sharing it over NFS, is to this one.
func startLiveWriter(t *testing.T, what string, ns bool) (*exec.Cmd, func(), string) {
	t.Helper()
	pid := 0
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), killedWriterEnv+"="+what, finishEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if ns {
		pid = freePid(t)
		cmd.Env = append(cmd.Env, nsPidEnv+"="+strconv.Itoa(pid))
		cmd.SysProcAttr = &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWPID,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Geteuid(), Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getegid(), Size: 1}},
			Pdeathsig:   syscall.SIGKILL,
		}
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, name, err := launchWriter(t, cmd)
	switch {
	case errors.Is(err, errNoStart):
		t.Skipf("no user and pid namespaces here: %v", err)
	case err != nil:
		cmd.Wait()
		if strings.Contains(stderr.String(), "set the namespace's next pid") {
			t.Skipf("cannot choose a pid in a new namespace: %s", stderr.String())
		}
		t.Fatalf("the writer said no temporary file: %v; its stderr: %s", err, stderr.String())
	}
	// The namespace's threads may take a pid or two first.
	if w, ok := writer(strings.TrimPrefix(strings.TrimPrefix(name, tempPrefix), ".runner-tmp")); ns && (!ok || w < pid || syscall.Kill(w, 0) != syscall.ESRCH) {
		t.Fatalf("the writer's file %s names no pid from %d on that is free here", name, pid)
	}
	return cmd, func() { stdin.Close() }, name
}

// A start that repairs or installs the runner while another start writes
// it must not take that write's file or copy for a killed writer's: the
// writer, which goes on to rename it, must finish, and leave the runner
// whole and nothing behind. In another pid namespace (a container, a
// sandbox sharing the home; another host over NFS) the writer's pid does
// not run here, so a pid cannot say it is alive.
func TestPathKeepsALiveWriters(t *testing.T) {
	for _, tt := range []struct {
		name string
		what func(cache, dir string) string
		ns   bool
	}{
		{"a file being rewritten", func(cache, dir string) string { return "file:" + filepath.Join(dir, "core.py") }, false},
		{"a first copy", func(cache, dir string) string { return "copy:" + cache }, false},
		{"a file being rewritten in another pid namespace", func(cache, dir string) string { return "file:" + filepath.Join(dir, "core.py") }, true},
		{"a first copy in another pid namespace", func(cache, dir string) string { return "copy:" + cache }, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cache := t.TempDir()
			dir := filepath.Dir(mustPath(t, cache))
			w, finish, name := startLiveWriter(t, tt.what(cache, dir), tt.ns)
			// What makes this start repair, or install, and so sweep.
			if strings.HasPrefix(tt.name, "a file") {
				os.WriteFile(filepath.Join(dir, "wire.py"), []byte("damaged"), 0o600)
			} else {
				os.RemoveAll(dir)
			}
			done := make(chan error, 1)
			go func() { _, err := Path(cache); done <- err }()
			awaitPathOrLockWait(t, done)
			finish()
			if err := w.Wait(); err != nil {
				t.Errorf("the other namespace's writer of %s failed to finish: %v", name, err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			checkCopy(t, dir)
			checkNoLeftovers(t, cache, dir)
		})
	}
}

// awaitPathOrLockWait returns once the Path call that will send on done
// has returned (done then holds its error again) or waits for a lock of
// the cache's (a "->" line of /proc/locks with this process's pid).
func awaitPathOrLockWait(t *testing.T, done chan error) {
	t.Helper()
	me := strconv.Itoa(os.Getpid())
	deadline := time.Now().Add(watchdog)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			done <- err
			return
		default:
		}
		locks, _ := os.ReadFile("/proc/locks")
		for _, line := range strings.Split(string(locks), "\n") {
			if f := strings.Fields(line); len(f) > 5 && f[1] == "->" && f[5] == me {
				return
			}
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("Path neither returned nor waited for a lock")
}

// checkNoLeftovers fails when the cache or runner dir holds a temporary
// file or directory.
func checkNoLeftovers(t *testing.T, cache, dir string) {
	t.Helper()
	for _, d := range []string{cache, dir} {
		ents, _ := os.ReadDir(d)
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), ".") && e.Name() != lockName {
				t.Errorf("%s was left in %s", e.Name(), d)
			}
		}
	}
}
