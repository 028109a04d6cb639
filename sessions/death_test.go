package sessions

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
)

// dyingExecutor dies in every cell it is given, with death.
type dyingExecutor struct {
	death *backend.DeathError
	once  sync.Once
	done  chan struct{}
}

func (e *dyingExecutor) Execute(ctx context.Context, req frames.Request, emit func(frames.Frame)) (frames.Frame, error) {
	emit(frames.Frame{Type: frames.TypeStarted, ID: req.ID})
	e.end()
	return frames.Frame{}, e.death
}
func (e *dyingExecutor) end()                  { e.once.Do(func() { close(e.done) }) }
func (e *dyingExecutor) Ready() frames.Frame   { return frames.Frame{Type: frames.TypeReady} }
func (e *dyingExecutor) Interrupt() error      { return nil }
func (e *dyingExecutor) Done() <-chan struct{} { return e.done }
func (e *dyingExecutor) Close() error          { e.end(); return nil }
func (e *dyingExecutor) Kill() error           { e.end(); return nil }
func (e *dyingExecutor) Alive() bool {
	select {
	case <-e.done:
		return false
	default:
		return true
	}
}

// What a backend knows of a death reaches the cell's message and notices:
// a gateway's report instead of the exit code it never learns (-1); a
// process's exit code or signal, as before, without its stderr tail,
// which the cell's own output already holds.
func TestDeathSaysHow(t *testing.T) {
	const lost = "the websocket to kernel k1 closed (EOF) and reconnecting failed for 10s: the kernel's state is lost to evalhost (it may still run on the gateway at http://gw)"
	tests := []struct {
		name    string
		death   *backend.DeathError
		batch   bool
		message string   // the cell's
		notices []string // in its stderr, in order
		absent  string   // in neither
	}{
		{"gateway, retried", &backend.DeathError{ExitCode: -1, Reason: lost}, false,
			"interpreter died twice: " + lost,
			[]string{"[interpreter died (" + lost + "); restarted it and retrying the cell once]", "[interpreter died twice: " + lost + "]"}, "exit code -1"},
		{"gateway, batch", &backend.DeathError{ExitCode: -1, Reason: lost}, true,
			"interpreter died: " + lost + "; not retried",
			[]string{"[interpreter died: " + lost + "; not retried"}, "exit code -1"},
		{"process, retried", &backend.DeathError{ExitCode: 3, StderrTail: "tail text\n"}, false,
			"interpreter died twice: exit code 3",
			[]string{"[interpreter died (exit code 3); restarted it and retrying the cell once]", "[interpreter died twice: exit code 3]"}, "tail text"},
		{"process, batch", &backend.DeathError{ExitCode: -1, Signal: "killed", StderrTail: "tail text\n"}, true,
			"interpreter died: signal: killed; not retried",
			[]string{"[interpreter died: signal: killed; not retried"}, "tail text"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRegistry(t, Config{Starters: map[string]Starter{LangPython: func(context.Context, Spec) (Executor, error) {
				return &dyingExecutor{death: tc.death, done: make(chan struct{})}, nil
			}}})
			res, c := eval(t, r, Request{Batch: tc.batch, Cells: []Cell{py("work()")}})
			cell := res.Cells[0]
			if cell.Status != StatusKilled || !strings.HasPrefix(cell.Message, tc.message) {
				t.Errorf("cell %s, message %q; want killed, %q", cell.Status, cell.Message, tc.message)
			}
			stderr := c.Text(frames.TypeStderr)
			rest := stderr
			for _, n := range tc.notices {
				i := strings.Index(rest, n)
				if i < 0 {
					t.Errorf("stderr %q lacks %q (in order)", stderr, n)
					break
				}
				rest = rest[i+len(n):]
			}
			if strings.Contains(stderr+cell.Message, tc.absent) {
				t.Errorf("stderr %q or message %q has %q", stderr, cell.Message, tc.absent)
			}
		})
	}
}

// In a batch, a Python interpreter's own exit during a cell (os._exit(N),
// a C exit(N)) ends the script as python3's process would end: the cell is
// killed and says how, and ScriptExit gives N, 0 included. A signal, a
// gateway's report or a session's death (retried) is no script's exit.
func TestBatchInterpreterExitEndsTheScript(t *testing.T) {
	tests := []struct {
		name   string
		death  *backend.DeathError
		batch  bool
		status int
		exit   bool   // ScriptExit's ok
		skip   string // the later cell's message
	}{
		{"exit 3", &backend.DeathError{ExitCode: 3}, true, 3, true, "not run: cell 1 ended the script: its interpreter exited with status 3"},
		{"exit 0", &backend.DeathError{ExitCode: 0}, true, 0, true, "not run: cell 1 ended the script: its interpreter exited with status 0"},
		{"signal", &backend.DeathError{ExitCode: -1, Signal: "killed"}, true, 0, false, "not run: the interpreter died in cell 1"},
		{"gateway", &backend.DeathError{ExitCode: -1, Reason: "the gateway reported kernel status dead"}, true, 0, false, "not run: the interpreter died in cell 1"},
		{"a session's", &backend.DeathError{ExitCode: 3}, false, 0, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRegistry(t, Config{Starters: map[string]Starter{LangPython: func(context.Context, Spec) (Executor, error) {
				return &dyingExecutor{death: tc.death, done: make(chan struct{})}, nil
			}}})
			res, _ := eval(t, r, Request{Batch: tc.batch, Cells: []Cell{py("work()"), py("later()")}})
			cell := res.Cells[0]
			status, exit := cell.ScriptExit()
			if cell.Status != StatusKilled || !strings.HasPrefix(cell.Message, "interpreter died") || status != tc.status || exit != tc.exit {
				t.Errorf("cell %s %q, ScriptExit %d %v; want killed, saying how, %d %v", cell.Status, cell.Message, status, exit, tc.status, tc.exit)
			}
			if later := res.Cells[1]; later.Status != StatusSkipped || !strings.HasPrefix(later.Message, tc.skip) {
				t.Errorf("later cell %s %q; want skipped, %q", later.Status, later.Message, tc.skip)
			}
		})
	}
}
