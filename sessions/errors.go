package sessions

import (
	"errors"
	"fmt"
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

	errNotDir = errors.New("not a directory")
)

// CwdError says why a requested working directory cannot be used.
type CwdError struct {
	Dir string
	Err error
}

func (e *CwdError) Error() string {
	return fmt.Sprintf("working directory %s cannot be used: %v", e.Dir, e.Err)
}

func (e *CwdError) Unwrap() []error { return []error{ErrBadRequest, e.Err} }

// InterpreterError lists what was tried when no interpreter was usable.
type InterpreterError struct {
	Tried []string // each "source: path: reason"
}

func (e *InterpreterError) Error() string {
	msg := "no python interpreter found; tried:"
	for _, t := range e.Tried {
		msg += "\n  " + t
	}
	return msg + "\nset --python, activate a virtualenv, or install python3"
}

func (e *InterpreterError) Unwrap() error { return ErrNoInterpreter }
