package backend

import (
	"errors"
	"fmt"
)

// Errors every backend (runner process, sh shell, gateway kernel) wraps, so
// the layers above branch on one vocabulary whatever executed the cell.
var (
	// ErrDied: the interpreter ended while a cell ran or before it could.
	// The error is a *DeathError carrying how it ended.
	ErrDied = errors.New("interpreter died")
	// ErrKilled: the cell was cancelled, the interrupt did not settle within
	// the grace window, and the backend killed the interpreter.
	ErrKilled = errors.New("interpreter killed after interrupt did not settle")
	// ErrClosed: the backend was closed (or killed) before the call.
	ErrClosed = errors.New("interpreter closed")
	// ErrBusy: Execute was called while another cell was executing.
	ErrBusy = errors.New("interpreter busy with another cell")
	// ErrInterruptWait, as the cause of an Execute context's cancellation
	// (context.WithCancelCause), asks the backend to interrupt the cell as
	// for any cancel and then to wait for it to stop until the cell's time
	// limit (TimeLimit's, else the context's deadline: the cell's timeout,
	// which the caller set and python3 has not), and only then kill it
	// after its grace window: python3's
	// Ctrl-C, which lets a script's `except KeyboardInterrupt:` save its
	// work. The caller may end a cell sooner (Kill). A timeout that came
	// first still escalates; a backend that cannot wait (a gateway kernel)
	// treats it as any cancel.
	ErrInterruptWait = errors.New("interrupted; the cell may take its time to stop")
	// ErrInterruptAlone, found in the cause of an Execute context's
	// cancellation (errors.Is: alone, or joined with ErrInterruptWait),
	// asks the backend to send its interrupt to the interpreter alone, not
	// to its process group: kill -INT of python3's pid, which python3's
	// children do not get, where a terminal's Ctrl-C reaches them too. It
	// changes the interrupt only: a stop after the grace window (SIGTERM,
	// SIGKILL) still ends the group. A backend whose interrupt is a
	// terminal's (a shell cell: bash ignores SIGINT, its foreground job is
	// what gets it) or a kernel's message interrupts as for any cancel.
	ErrInterruptAlone = errors.New("interrupted, the interpreter alone")
)

// DeathError says how an interpreter ended. It matches ErrDied.
type DeathError struct {
	ExitCode int    // exit status when it exited; -1 when signalled or unknown
	Signal   string // e.g. "killed", "segmentation fault"; empty when it exited
	// Signum is the number of the signal that ended it (Signal), when the
	// backend saw the wait status; 0 otherwise.
	Signum     int
	StderrTail string // last lines it wrote to stderr outside cells, if any
	// Reason is what a backend that did not see the interpreter exit knows
	// of its end (a gateway's status report, a connection lost for good).
	// When set, messages give it instead of the exit code, which is then
	// unknown.
	Reason string
}

func (e *DeathError) Error() string { return "interpreter died: " + e.How() }

func (e *DeathError) Unwrap() error { return ErrDied }

// How describes the ending for messages like "interpreter died twice: <how>".
func (e *DeathError) How() string {
	switch {
	case e.Reason != "":
		return e.Reason
	case e.Signal != "":
		return "signal: " + e.Signal
	}
	return fmt.Sprintf("exit code %d", e.ExitCode)
}
