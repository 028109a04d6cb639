package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A home whose socket path is too long for a Unix socket's name keeps its
// socket there (Linux names it through /proc/self/fd): a process killed
// with SIGKILL leaves it stale and the next command clears it, and a
// socket at that path served by another user's process is refused.
func TestDaemonLongHome(t *testing.T) {
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("no /proc/self/fd here")
	}
	longHome := func(t *testing.T) string { return filepath.Join(t.TempDir(), strings.Repeat("h", 120)) }
	t.Run("killed process replaced", func(t *testing.T) {
		h := newDaemonHomeAt(t, longHome(t))
		sock := filepath.Join(h.home, "daemon", "sock")
		pid := h.pid("s")
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitGone(t, pid)
		if _, err := os.Lstat(sock); err != nil {
			t.Fatalf("the killed process's socket: %v, want it left", err)
		}
		_, stderr, code := h.run("run", "--session", "s", "-c", "1")
		want := fmt.Sprintf("ended with the background process (pid %d), which ended without a stop", pid)
		if code != 0 || !strings.Contains(stderr, want) {
			t.Fatalf("exit %d, stderr %q; want it to say %q", code, stderr, want)
		}
		if newPID := h.pid("s"); newPID == pid {
			t.Fatal("the killed process is still the one serving")
		}
		if out, _, code := h.run("daemon", "status"); code != 0 || !strings.Contains(out, "socket "+sock) {
			t.Fatalf("daemon status: exit %d: %s", code, out)
		}
	})
	t.Run("socket served by another user's process", func(t *testing.T) {
		if os.Getuid() != 0 {
			t.Skip("needs root to run a process as another user")
		}
		h := &daemonHome{t: t, home: longHome(t), bin: binary}
		dir := filepath.Join(h.home, "daemon")
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		foreignListener(t, filepath.Join(dir, "sock"), 65534)
		// Refused, it starts no process; should one start, stop it (the
		// stop of one that did not is refused the same way: ignored).
		t.Cleanup(func() { h.cmd("daemon", "stop").Run() })
		_, stderr, code := h.run("run", "--session", "s", "-c", "1")
		if code != 1 || !strings.Contains(stderr, "is served by a process of uid 65534") {
			t.Fatalf("exit %d, stderr %q; want the refusal of another user's process", code, stderr)
		}
	})
}
