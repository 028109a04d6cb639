package host

import (
	"errors"
	"fmt"
)

// ErrStartTimeout: the runner did not send ready within Options.StartTimeout.
var ErrStartTimeout = errors.New("interpreter did not become ready in time")

// StartError reports a failed Start with what the child wrote to stderr.
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
