package faults

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/testkit"
)

// spawnTool is a tool command that backgrounds a sleep, a setsid one and
// one left by a shell that exited, writes their pids and its own to the
// file "pids" (renamed into place whole), then runs sleep 1000 in its
// place, so the call never ends by itself.
const spawnTool = `sleep 1001 >/dev/null 2>&1 & a=$!
setsid sleep 1002 >/dev/null 2>&1 & b=$!
c=$(sh -c 'sleep 1003 >/dev/null 2>&1 & echo $!')
echo $$ $a $b $c > pids.tmp && mv pids.tmp pids
exec sleep 1000`

// When `evalhost run` is SIGKILLed while a cell's tool command runs, the
// command and everything it started in the background end, as a cell's
// own processes do (the tool command runs under
// a reaper).
func TestToolCommandHostKilled(t *testing.T) {
	testkit.Python(t)
	t.Cleanup(leakcheck.Watchdog(t, watchdogAfter))
	dir := t.TempDir()
	cmd := exec.Command(evalhostBinary(t), "run", "--timeout", "600", "--tool", "spawn="+spawnTool, "-c", "tool.spawn()")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "EVALHOST_HOME="+t.TempDir())
	h := launchHost(t, cmd, "run")
	pids := awaitPIDFile(t, filepath.Join(dir, "pids"), h)
	for _, pid := range pids {
		if leakcheck.Gone(pid, 0) {
			h.kill()
			t.Fatalf("process %d not running before evalhost is killed", pid)
		}
	}
	h.kill()
	killed := time.Now()
	for _, pid := range pids {
		if !leakcheck.Gone(pid, time.Until(killed.Add(hangBound))) {
			t.Errorf("tool process %d still ran %s after evalhost's SIGKILL", pid, hangBound)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// awaitPIDFile waits for the tool to write its pids, or for the host to
// end without them.
func awaitPIDFile(t *testing.T, path string, h *host) []int {
	t.Helper()
	deadline := time.Now().Add(watchdogLimit())
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil {
			var pids []int
			for _, f := range strings.Fields(string(b)) {
				n, err := strconv.Atoi(f)
				if err != nil {
					t.Fatalf("pids file %q", b)
				}
				pids = append(pids, n)
			}
			return pids
		}
		select {
		case _, ok := <-h.lines:
			if !ok {
				t.Fatal("evalhost run ended before its tool wrote its pids")
			}
		case <-time.After(10 * time.Millisecond):
		}
	}
	h.kill()
	t.Fatalf("no %s within %s", path, watchdogLimit())
	return nil
}
