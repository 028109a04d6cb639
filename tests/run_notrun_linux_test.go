package tests

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// A Ctrl-C in the first cell of a long percent script (3000 cells) says
// in one line which cells did not run, where there was a line per cell;
// --json keeps a cell_end line for every cell, serve's contract (frames,
// a cell_end per cell, one end).
func TestRunSaysOnceWhichCellsDidNotRun(t *testing.T) {
	const cells = 3000
	var src strings.Builder
	src.WriteString("# %%\n" + waitingScript("", ""))
	for i := 2; i <= cells; i++ {
		fmt.Fprintf(&src, "# %%%%\nprint(%d)\n", i)
	}
	script := writeScript(t, t.TempDir(), "long.py", src.String())
	t.Run("human", func(t *testing.T) {
		end := signalled(t, command(t, "run", script), sendSignal(syscall.SIGINT))
		want := fmt.Sprintf("[cells 2\u2013%d were not run: the run was cancelled before they started]\n", cells)
		if !strings.HasSuffix(end.stderr, "KeyboardInterrupt\n"+want) || strings.Count(end.stderr, "\n[") != 1 {
			t.Errorf("stderr %q; want the KeyboardInterrupt's traceback, then only %q", end.stderr, want)
		}
		if !end.ws.Signaled() || end.ws.Signal() != syscall.SIGINT {
			t.Errorf("run ended %s, want killed by SIGINT", how(end.ws))
		}
	})
	t.Run("--json", func(t *testing.T) {
		cmd := command(t, "run", "--json", script)
		w := startWaitingJSON(t, cmd)
		cmd.Process.Signal(syscall.SIGINT)
		rest, _ := io.ReadAll(w.r)
		cmd.Wait()
		if n := strings.Count(string(rest), `"type":"cell_end"`); n != cells {
			t.Errorf("%d cell_end lines, want %d", n, cells)
		}
		if n := strings.Count(string(rest), `"message":"request cancelled before the cell started"`); n != cells-1 {
			t.Errorf("%d cell_end lines say the cell never started, want %d", n, cells-1)
		}
	})
}

// startWaitingJSON is startWaiting for run --json: it returns once the
// script's interpreter (the ready line's pid), having printed, is blocked
// in read(2).
func startWaitingJSON(t *testing.T, cmd *exec.Cmd) waiting {
	t.Helper()
	stdout, stderr := testkit.StartPiped(t, cmd)
	t.Cleanup(func() { cmd.Process.Kill() })
	r := bufio.NewReader(stdout)
	pid := 0
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("the output ended (%v) before the script printed; stderr %s", err, stderr)
		}
		var f struct {
			Type string
			PID  int
		}
		if json.Unmarshal([]byte(line), &f) != nil {
			continue
		}
		if f.Type == "ready" {
			pid = f.PID
		}
		if f.Type == "stdout" && pid > 0 {
			break
		}
	}
	testkit.WaitSyscall(t, pid, syscall.SYS_READ)
	return waiting{stdout: stdout, r: r, pid: pid, stderr: stderr}
}
