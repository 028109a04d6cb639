package host

import (
	"errors"
	"fmt"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/internal/trustdir"
)

// ErrStartTimeout: the runner did not send ready within Options.StartTimeout.
var ErrStartTimeout = backend.ErrStartTimeout

// ErrNotRunning: Signal or SignalForeground was called while no cell ran.
var ErrNotRunning = errors.New("no cell running")

// StartError reports a failed Start with what the child wrote to stderr.
type StartError = backend.StartError

// EarlyExitError is an interpreter that ended before the runner in it sent
// ready: a *StartError's Err. It matches backend.ErrDied (Death says how).
// An exit with nothing on stderr is what a program that is not Python
// does with runner.py's arguments (/bin/true, a wrapper script that runs
// something else), so its message says so; one that wrote to stderr
// (Python's own error: too old for the runner, a broken install) is left
// to say why, in the StartError's stderr tail.
type EarlyExitError struct {
	Python string
	Death  *backend.DeathError
}

func (e *EarlyExitError) Error() string {
	python := trustdir.Shown(e.Python)
	const when = "before evalhost's runner started in it"
	switch {
	case e.Death.Signal != "":
		return fmt.Sprintf("%s was ended by a signal (%s) %s", python, e.Death.Signal, when)
	case e.Death.StderrTail != "":
		return fmt.Sprintf("%s ended with exit code %d %s", python, e.Death.ExitCode, when)
	}
	return fmt.Sprintf("%s ended with exit code %d %s: it is likely not a Python interpreter, or is one that cannot run the runner",
		python, e.Death.ExitCode, when)
}

func (e *EarlyExitError) Unwrap() error { return e.Death }
