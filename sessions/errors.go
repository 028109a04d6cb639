package sessions

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/evalhost/evalhost/internal/trustdir"
)

var (
	// ErrResetInProgress rejects a reset while another reset of the same
	// session has not finished.
	ErrResetInProgress = errors.New("a reset of this session is already in progress; wait for it to finish")
	// ErrClosed is returned after the registry was closed.
	ErrClosed = errors.New("session registry is closed")
	// ErrSessionClosed: the session was closed (CloseSession or Close) while
	// a request waited for it or ran in it. Eviction and the idle timeout
	// close only sessions no request is queued on.
	ErrSessionClosed = errors.New("the session was closed; a new request starts a fresh session")
	// ErrNoInterpreter: no Python interpreter could be found.
	ErrNoInterpreter = errors.New("no python interpreter found")
	// ErrBadRequest wraps every validation failure of a request.
	ErrBadRequest = errors.New("bad request")

	// ErrSessionBusy: a detached cell runs in the session as a job; see
	// SessionBusyError.
	ErrSessionBusy = errors.New("the session is busy with a detached job")
	// ErrNoJob: no job has that id (never started, or ended long enough
	// ago to be forgotten).
	ErrNoJob = errors.New("no such job")

	errNotDir = errors.New("not a directory")

	// Why a candidate interpreter's file was not one (Tried.Err).
	errNotFound      = errors.New("not found")
	errNotExecutable = errors.New("permission denied: not an executable file")
	errIsDir         = errors.New("is a directory, not a Python executable")
)

// SessionBusyError refuses a request (or reset) to a session whose detached
// cell still runs as a job.
type SessionBusyError struct {
	Session string
	Job     string
}

func (e *SessionBusyError) Error() string {
	return fmt.Sprintf("session %q is busy: job %s (a detached cell) is still running in it; wait for the job, stop it, or use another session",
		e.Session, e.Job)
}

func (e *SessionBusyError) Unwrap() error { return ErrSessionBusy }

// JobError says which job id was not found.
type JobError struct{ ID string }

func (e *JobError) Error() string {
	return fmt.Sprintf("no job %q: it never ran here, or it ended and was forgotten (the last %d ended jobs are kept); list the jobs to see which are kept", e.ID, keptJobs)
}

func (e *JobError) Unwrap() error { return ErrNoJob }

// CwdError says why a requested working directory cannot be used.
type CwdError struct {
	Dir string
	Err error
}

func (e *CwdError) Error() string {
	return fmt.Sprintf("working directory %s cannot be used: %s", trustdir.Shown(e.Dir), shownErr(e.Err))
}

func (e *CwdError) Unwrap() []error { return []error{ErrBadRequest, e.Err} }

// InterpreterError lists what was tried when no interpreter was usable.
type InterpreterError struct {
	Tried []Tried
}

// Tried is an interpreter tried, and why it was not used.
type Tried struct {
	Source string // as Interpreter.Source
	Path   string
	Err    error
}

func (e *InterpreterError) Error() string {
	msg := "no python interpreter found; tried:"
	for _, t := range e.Tried {
		msg += "\n  " + t.Source + ": " + trustdir.Shown(t.Path) + ": " + shownErr(t.Err)
	}
	return msg + "\n" + e.hint()
}

// hint is what to do. An explicit interpreter (--python; Config.Python or
// Request.Python) that fails is the only one tried, and the user, who gave
// it, needs to hear what is wrong with it, not to be told to give one.
func (e *InterpreterError) hint() string {
	if len(e.Tried) != 1 || e.Tried[0].Source != "--python" {
		return "set --python, activate a virtualenv, or install python3"
	}
	const todo = "give the path of a Python 3 interpreter, or leave --python out to use an active virtualenv's, ./.venv's or python3 on PATH"
	t := e.Tried[0]
	switch {
	case errors.Is(t.Err, errNotFound) && !strings.ContainsRune(t.Path, os.PathSeparator):
		return "no program of the name given to --python is on PATH: " + todo
	case errors.Is(t.Err, errNotFound):
		return "the path given to --python does not exist: " + todo
	case errors.Is(t.Err, errIsDir):
		return "the path given to --python is a directory (a virtualenv's interpreter is bin/python in it): " + todo
	case errors.Is(t.Err, errNotExecutable), errors.Is(t.Err, fs.ErrPermission):
		return "the path given to --python is not a file you may run: " + todo
	}
	return "the interpreter given to --python cannot be used: " + todo
}

// shownErr is err's text as an error of this package prints it: a path
// in it may be another user's to name (a cwd in /tmp), and printed raw a
// newline or an escape sequence in it could fake a line an agent reads.
// So the path of an *fs.PathError is printed by trustdir.Shown, each line
// of an interpreter's stderr (a *stderrError) by it, and any other text
// by it whole (a trustdir refusal's, already so printed, as it is).
func shownErr(err error) string {
	if e, ok := err.(*stderrError); ok {
		return trustdir.Shown(e.head()) + ": " + trustdir.ShownLines(e.tail, "\n    ")
	}
	return trustdir.ShownError(err).Error()
}

// stderrError is an interpreter that did not run, with the last lines it
// wrote to stderr: where Python says why ("Fatal Python error: …").
type stderrError struct {
	err  error
	tail []string
}

func (e *stderrError) head() string { return fmt.Sprintf("does not run (%v)", e.err) }

func (e *stderrError) Error() string { return e.head() + ": " + strings.Join(e.tail, "\n    ") }

func (e *stderrError) Unwrap() error { return e.err }

func (e *InterpreterError) Unwrap() error { return ErrNoInterpreter }

// UntrustedVenvError refuses a virtualenv in the cwd that another user
// could have put or changed there: its python would run as this user.
type UntrustedVenvError struct {
	Source, Path string // ".venv" or "venv", and its bin/python
	Err          error  // the trustdir refusal, which says what to fix
}

func (e *UntrustedVenvError) Error() string {
	do := "remove it if it is not yours"
	var te *trustdir.Error
	var pe *pathLineError
	var de *danglingLinkError
	switch {
	case errors.As(e.Err, &pe):
		do = pe.fix()
	case errors.As(e.Err, &de):
		do = de.fix()
	case errors.As(e.Err, &te):
		do = venvAdvice(te)
	}
	return fmt.Sprintf("refusing the %s interpreter %s, which another user could have put there or changed: %s; %s; or name an interpreter with --python",
		e.Source, trustdir.Shown(e.Path), shownErr(e.Err), do)
}

// venvAdvice says what to do about a refused part of a venv, naming what
// must change: where a link led, the target (te.At) is what to take over
// or chmod, and the link in the venv (te.Via) what to remove.
func venvAdvice(te *trustdir.Error) string {
	if te.Trust() == "" && te.Fix() != "" {
		return "if you trust what is in it, run: " + te.Fix()
	}
	at, q := trustdir.Shown(te.At), trustdir.ShellQuote(te.At)
	var do string
	switch {
	case te.Problem == trustdir.LinkOwned:
		do = "remove the symbolic link " + at + " if it is not yours, or make one of your own in its place"
	case te.Role == trustdir.Above:
		do = "remove the venv if it is not yours"
	case te.Via != "" && te.Problem == trustdir.Owned:
		do = fmt.Sprintf("remove the link %s if you did not make it, or if you trust %s, make it yours: chown -R $(id -u) %s && chmod -R go-w %s",
			trustdir.Shown(te.Via), at, q, q)
	case te.Via != "":
		do = "remove the link " + trustdir.Shown(te.Via) + " if you did not make it"
	case te.Problem == trustdir.Owned:
		do = fmt.Sprintf("remove %s if it is not yours, or if you trust it, make it yours: chown -R $(id -u) %s && chmod -R go-w %s", at, q, q)
	default:
		do = "remove " + at + " if it is not yours"
	}
	if t := te.Trust(); t != "" {
		do += "; or " + t
	}
	return do
}

func (e *UntrustedVenvError) Unwrap() error { return e.Err }
