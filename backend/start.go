package backend

import (
	"errors"
	"fmt"
)

// Errors of starting a local interpreter (the runner, bash), which callers
// branch on whichever backend failed to start.
var (
	// ErrStartTimeout: the interpreter did not get ready within its start
	// timeout.
	ErrStartTimeout = errors.New("interpreter did not become ready in time")
	// ErrNoInterpreter: the interpreter's executable does not name a
	// runnable file.
	ErrNoInterpreter = errors.New("interpreter not found")
)

// StartError reports a failed start with what the child wrote to stderr.
type StartError struct {
	Err        error
	StderrTail string
}

func (e *StartError) Error() string {
	if e.StderrTail == "" {
		return "start interpreter: " + e.Err.Error()
	}
	return fmt.Sprintf("start interpreter: %v; its stderr ends with:\n%s", e.Err, e.StderrTail)
}

func (e *StartError) Unwrap() error { return e.Err }
