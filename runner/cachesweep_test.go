package runner

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stopProbe is a sitecustomize for the runner's interpreter: an audit hook
// that sends the process EVALHOST_TEST_SIGNAL (SIGKILL, SIGSTOP) at a point
// of its first bytecode-cache write, EVALHOST_TEST_AT: "write" once the
// temporary file exists and nothing is written (the open of its fd),
// "rename" once it is written, before its rename. A real signal, at a point
// the test picks.
const stopProbe = `import os, signal, sys
_at, _sig, _tmp = os.environ["EVALHOST_TEST_AT"], getattr(signal, os.environ["EVALHOST_TEST_SIGNAL"]), []
def _hook(event, args):
    if _tmp == [None] or event not in ("open", "os.rename"):
        return
    if event == "open" and isinstance(args[0], str) and args[0].endswith(".tmp") and ".evh." in args[0]:
        _tmp.append(args[0])  # os.open of the temporary file: not created yet
    elif _tmp and (event == "open" and _at == "write" or event == "os.rename" and _at == "rename"):
        _tmp[:] = [None]  # once: after the stop, the write goes on
        os.kill(os.getpid(), _sig)
sys.addaudithook(_hook)
`

// startSignalled starts runner.py (path, a fresh copy: no bytecode cache
// yet) with stopProbe, so it gets sig at the point at of its write of core's
// cache. It is not wired as the host wires it: it only loads core.
func startSignalled(t *testing.T, path, sig, at string) *exec.Cmd {
	t.Helper()
	site := t.TempDir()
	writeFile(t, site, "sitecustomize.py", stopProbe)
	cmd := exec.Command(python(t), path)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LANG=C.UTF-8",
		"PYTHONPATH=" + site, "EVALHOST_TEST_SIGNAL=" + sig, "EVALHOST_TEST_AT=" + at}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		if t.Failed() {
			t.Logf("signalled runner's stderr: %q", stderr.String())
		}
	})
	return cmd
}

// tmpOf is the temporary file pid writes core's cache to in pycache.
func tmpOf(t *testing.T, pycache string, pid int) string {
	t.Helper()
	found, _ := filepath.Glob(filepath.Join(pycache, fmt.Sprintf("core.*.evh.%d.tmp", pid)))
	if len(found) != 1 {
		names, _ := filepath.Glob(filepath.Join(pycache, "*"))
		t.Fatalf("temporary files of pid %d: %v, want one; %s holds %v", pid, found, pycache, names)
	}
	return found[0]
}

// TestKilledCacheWriteIsSwept: a runner SIGKILLed while it writes a
// bytecode cache leaves its temporary file; the next runner to start in
// that directory removes it.
func TestKilledCacheWriteIsSwept(t *testing.T) {
	for _, at := range []string{"write", "rename"} {
		t.Run("killed before its "+at, func(t *testing.T) {
			path, err := Path(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			pycache := filepath.Join(filepath.Dir(path), "__pycache__")
			killed := startSignalled(t, path, "SIGKILL", at)
			err = killed.Wait()
			if ws, ok := killed.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Fatalf("runner not killed by the probe: %v", err)
			}
			tmp := tmpOf(t, pycache, killed.Process.Pid)
			if fi, err := os.Stat(tmp); err != nil || (fi.Size() == 0) != (at == "write") {
				t.Fatalf("left %s: %v, %v", tmp, fi, err)
			}
			p := start(t, startOpts{runner: path})
			wantResult("2")(t, p.run("1 + 1")) // the sweep runs before the first request is served
			if _, err := os.Lstat(tmp); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s still there after a start: %v", tmp, err)
			}
			if caches, _ := filepath.Glob(filepath.Join(pycache, "core.*.evh")); len(caches) != 1 {
				t.Errorf("core's caches %v, want one", caches)
			}
		})
	}
}

// TestLiveCacheWriteIsKept: two runners write one cache at once. One
// stopped between its write and its rename is still a writer: a runner that
// starts meanwhile leaves its temporary file, and once it goes on its rename
// puts the cache in place.
func TestLiveCacheWriteIsKept(t *testing.T) {
	path, err := Path(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pycache := filepath.Join(filepath.Dir(path), "__pycache__")
	stopped := startSignalled(t, path, "SIGSTOP", "rename")
	pid := stopped.Process.Pid
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, syscall.WUNTRACED, nil); err != nil || !ws.Stopped() {
		t.Fatalf("runner not stopped by the probe: %v, %v", ws, err)
	}
	tmp := tmpOf(t, pycache, pid)
	p := start(t, startOpts{runner: path})
	wantResult("2")(t, p.run("1 + 1"))
	if _, err := os.Lstat(tmp); err != nil {
		t.Fatalf("a live writer's %s was removed: %v", tmp, err)
	}
	p.close()
	cache := strings.TrimSuffix(tmp, fmt.Sprintf(".%d.tmp", pid))
	before, err := os.Stat(cache)
	if err != nil {
		t.Fatalf("the other runner wrote no cache: %v", err)
	}
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { stopped.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(watchdog):
		t.Fatalf("watchdog: the continued runner did not exit within %v", watchdog)
	}
	if _, err := os.Lstat(tmp); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s still there after its rename: %v", tmp, err)
	}
	if after, err := os.Stat(cache); err != nil || os.SameFile(before, after) {
		t.Errorf("the continued runner's rename did not replace %s (%v)", cache, err)
	}
	wantResult("2")(t, start(t, startOpts{runner: path}).run("1 + 1"))
}

// TestCacheSweepTakesOnlyDeadWritersFiles: what the sweep at start removes
// from __pycache__ and what it leaves.
func TestCacheSweepTakesOnlyDeadWritersFiles(t *testing.T) {
	path, err := Path(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pycache := filepath.Join(filepath.Dir(path), "__pycache__")
	if err := os.Mkdir(pycache, 0o700); err != nil {
		t.Fatal(err)
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	dead, live := gone.Process.Pid, os.Getpid()
	outside := writeFile(t, t.TempDir(), "target", "kept")
	for _, tc := range []struct {
		name    string
		file    string
		make    func(t *testing.T, path string) // nil: a regular file of this user's
		removed bool
	}{
		{name: "a dead writer's", file: fmt.Sprintf("core.x.evh.%d.tmp", dead), removed: true},
		{name: "a live writer's", file: fmt.Sprintf("cells.x.evh.%d.tmp", live)},
		{name: "another user's", file: fmt.Sprintf("wire.x.evh.%d.tmp", dead),
			make: func(t *testing.T, path string) {
				writeFile(t, filepath.Dir(path), filepath.Base(path), "")
				if err := os.Lchown(path, nobody, nobody); err != nil {
					t.Skipf("chown to uid %d needs root: %v", nobody, err)
				}
			}},
		{name: "not a cache's", file: fmt.Sprintf("notes.%d.tmp", dead)},
		{name: "a directory", file: fmt.Sprintf("stdio.x.evh.%d.tmp", dead),
			make: func(t *testing.T, path string) {
				if err := os.Mkdir(path, 0o700); err != nil {
					t.Fatal(err)
				}
			}},
		{name: "a symlink", file: fmt.Sprintf("display.x.evh.%d.tmp", dead),
			make: func(t *testing.T, path string) {
				if err := os.Symlink(outside, path); err != nil {
					t.Fatal(err)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(pycache, tc.file)
			if tc.make == nil {
				writeFile(t, pycache, tc.file, "")
			} else {
				tc.make(t, file)
			}
			defer os.RemoveAll(file)
			wantResult("2")(t, start(t, startOpts{runner: path}).run("1 + 1"))
			_, err := os.Lstat(file)
			if removed := errors.Is(err, os.ErrNotExist); removed != tc.removed {
				t.Errorf("%s removed: %v (%v), want %v", tc.file, removed, err, tc.removed)
			}
			if b, err := os.ReadFile(outside); err != nil || string(b) != "kept" {
				t.Errorf("the symlink's target: %q, %v", b, err)
			}
		})
	}
}
