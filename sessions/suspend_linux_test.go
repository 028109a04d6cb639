package sessions

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/testkit"
)

// Suspend stops the running cell's interpreter and holds its timeout until
// Resume: a cell stopped for longer than its timeout is not timed out when
// it goes on, and ends as it would have (here, released by a signal after
// it was continued). Its result tells the stop apart (StoppedMs).
func TestSuspendHoldsTheTimeout(t *testing.T) {
	r := newTestRegistry(t, Config{Grace: 200 * time.Millisecond})
	const code = "import os, signal\nr, w = os.pipe()\nsignal.signal(signal.SIGUSR1, lambda n, f: os.write(w, b'x'))\n" +
		"print('ready', flush=True)\nos.read(r, 1)\nprint('after')"
	if r.Suspend("none") || r.Resume("none") {
		t.Fatal("Suspend or Resume of a session that does not exist said an interpreter got it")
	}
	// Twice the least limit: what the cell runs besides its stop (its
	// start to "ready", the Suspend, the continue to its end) must fit in
	// it under a CI's load, where 1 s once did not.
	const limit = 2 * MinTimeout
	cell := py(code)
	cell.Timeout = limit
	pid, end := evalReady(t, r, Request{Session: "stop", Mode: ModePerCall, Batch: true, Cwd: t.TempDir(), Cells: []Cell{cell}})
	if !r.Suspend("stop") {
		t.Fatal("Suspend said no interpreter was stopped")
	}
	testkit.WaitState(t, pid, 'T')
	time.Sleep(3 * limit / 2) // stopped for longer than the cell's timeout: the stimulus
	if !r.Resume("stop") {
		t.Fatal("Resume said no interpreter got SIGCONT")
	}
	testkit.WaitState(t, pid, 0)
	// Back asleep in its read first: a signal that lands while the read
	// is being restarted after the SIGCONT runs its C handler and then
	// the read blocks, the Python handler never run (python3's own race,
	// which CI's load hit, the cell then timing out).
	testkit.WaitSyscall(t, pid, syscall.SYS_READ)
	if !r.Signal("stop", syscall.SIGUSR1) {
		t.Error("the cell was no longer running once it was continued")
	}
	c := (<-end).Cells[0]
	if c.Status != StatusOK || c.Output.Text != "ready\nafter\n" {
		t.Errorf("status %s (%s), output %q; want ok, the cell released after it went on", c.Status, c.Message, c.Output.Text)
	}
	// The stop is the cell's, apart from its run time: it lasted at least
	// the sleep between Suspend and Resume.
	if stopped := time.Duration(c.StoppedMs * float64(time.Millisecond)); stopped < 3*limit/2 || c.StoppedMs > c.DurationMs {
		t.Errorf("stoppedMs %v of durationMs %v; want at least %v, within the duration", c.StoppedMs, c.DurationMs, 3*limit/2)
	}
}

// An interpreter that dies while Suspend holds it stopped (SIGKILL, the
// OOM killer) takes the suspension with it: the session's next interpreter
// runs, and its cells' timeouts count from their start. Before, the
// session stayed suspended, and a later cell's timeout was held for ever.
func TestSuspensionEndsWithItsInterpreter(t *testing.T) {
	r := newTestRegistry(t, Config{Grace: 200 * time.Millisecond})
	cwd := t.TempDir()
	pid, end := evalReady(t, r, Request{Session: "s", Cwd: cwd, Batch: true, Cells: []Cell{py("print('ready', flush=True)\nimport time\ntime.sleep(60)")}})
	if !r.Suspend("s") {
		t.Fatal("Suspend said no interpreter was stopped")
	}
	testkit.WaitState(t, pid, 'T')
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-end
	cell := py("import time\ntime.sleep(60)")
	cell.Timeout = MinTimeout
	done := make(chan Result, 1)
	go func() {
		res, _ := r.Eval(context.Background(), Request{Session: "s", Cwd: cwd, Cells: []Cell{cell}}, nil)
		done <- res
	}()
	select {
	case res := <-done:
		if c := res.Cells[0]; c.Status != StatusTimeout {
			t.Errorf("the next cell ended %s (%s); want its %v timeout", c.Status, c.Message, MinTimeout)
		}
	case <-time.After(20 * MinTimeout):
		r.Resume("s") // let the held cell end, so the registry can close
		t.Fatalf("a %v timeout did not end the next cell in %v: its time limit was held", MinTimeout, 20*MinTimeout)
	}
}
