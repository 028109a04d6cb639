package daemon

import (
	"errors"
	"fmt"
	"time"

	"github.com/evalhost/evalhost/internal/trustdir"
)

var (
	// ErrNotRunning: no background process is running (for Stop, Dial).
	ErrNotRunning = errors.New("no evalhost background process is running")
	// ErrRunning: Serve found another live background process for this home.
	ErrRunning = errors.New("an evalhost background process is already running for this home")

	// ErrBadLine: Next read a line the protocol does not allow (a bytes
	// line without its size, a line longer than MaxLine); what follows it
	// cannot be read.
	ErrBadLine = errors.New("a bad line from the background process")

	errLocked = errors.New("locked")
	// errSocketPath: the socket's path can be neither bound nor connected,
	// so starting a process would not help.
	errSocketPath = errors.New("the background process's socket path is too long")
)

// LineTooLongError: a request (cells as JSON, escapes included) is longer
// than the background process reads in one line (MaxLine); it was not
// sent, and the connection is as it was.
type LineTooLongError struct {
	Size, Max int // bytes
}

func (e *LineTooLongError) Error() string {
	return fmt.Sprintf("the request is %d MiB as JSON, over the %d MiB the background process takes in one request; "+
		"split the code across commands, or run it without a session", (e.Size+1<<20-1)>>20, e.Max>>20)
}

// UnsafeError refuses a file another user owns or could use: the
// directory, the socket, or the process at its other end.
type UnsafeError struct {
	Path, Reason string
}

func (e *UnsafeError) Error() string {
	return fmt.Sprintf("refusing %s: it %s; remove it, or set EVALHOST_HOME to a directory of your own", trustdir.Shown(e.Path), e.Reason)
}

// StartError says why a background process did not come up.
type StartError struct {
	Log string // the tail of its log
	Err error
}

func (e *StartError) Error() string {
	msg := "the evalhost background process did not start: " + e.Err.Error()
	if e.Log != "" {
		msg += "\n  its log says: " + e.Log
	}
	return msg
}

func (e *StartError) Unwrap() error { return e.Err }

// BusyVersionError refuses to replace a background process of another
// evalhost build while cells or jobs run in it: replacing it would kill
// them, and their commands would read it as an interrupt.
type BusyVersionError struct {
	PID      int
	Version  string   // the running process's
	Sessions []string // the sessions running a cell or a job
	Busy     string   // else what the process said when it refused to stop (other commands' requests came since)
}

func (e *BusyVersionError) Error() string {
	what := "runs cells or jobs in sessions " + trustdir.ShownLines(e.Sessions, ", ")
	if len(e.Sessions) == 0 {
		what = "is in use (" + trustdir.Shown(e.Busy) + ")"
	}
	return fmt.Sprintf("the background process (pid %d) is another evalhost build (%s) and %s, "+
		"so it is not replaced now: wait for them (evalhost sessions, evalhost jobs), or end them with \"evalhost daemon stop\" "+
		"run by that build or this one, then try again", e.PID, e.Version, what)
}

// HungError: the background process stopped answering. Before Attached,
// it accepted a connection but sent no hello in time (stopped, hung,
// swapped out); it still holds its lock, so no other can start until it
// ends. Attached: it had sent its hello, then for Wait neither answered a
// ping nor took what the client sent; resumed, it cancels what the client
// asked, as for any client that left.
type HungError struct {
	PID      int // from its hello, else its state file; 0 when unknown
	Wait     time.Duration
	Attached bool
}

func (e *HungError) Error() string {
	who, cont, kill := "the background process", "kill -CONT", "kill"
	if e.PID > 0 {
		who = fmt.Sprintf("the background process (pid %d)", e.PID)
		cont, kill = fmt.Sprintf("kill -CONT %d", e.PID), fmt.Sprintf("kill %d", e.PID)
	}
	if e.Attached {
		return fmt.Sprintf("%s stopped answering: for %s it neither answered a ping nor took what this command sent; it is stopped or hung. "+
			"Resume it (%s: it then cancels what this command asked, as for any command that ended) or end it (%s: its sessions' state is lost)",
			who, e.Wait, cont, kill)
	}
	return fmt.Sprintf("%s accepted the connection but sent nothing within %s: it is stopped or hung; "+
		"resume it (%s) or end it (%s), then try again", who, e.Wait, cont, kill)
}

// EndedError is what Next returns, once the hello came, when the process
// closed the connection: it ended while the client relied on it. Why is
// what its stopping line said, after "the background process (pid N) "
// (a stop, a signal); empty when it sent none: it was killed or crashed,
// and Err is what the read got (io.EOF, a reset).
type EndedError struct {
	PID int
	Why string
	Err error
}

func (e *EndedError) Error() string {
	if e.Why != "" {
		return fmt.Sprintf("the background process (pid %d) %s", e.PID, e.Why)
	}
	return fmt.Sprintf("the background process (pid %d) ended without a stop (killed or crashed: %v)", e.PID, e.Err)
}

func (e *EndedError) Unwrap() error { return e.Err }
