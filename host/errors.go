package host

import (
	"errors"

	"github.com/evalhost/evalhost/backend"
)

// ErrStartTimeout: the runner did not send ready within Options.StartTimeout.
var ErrStartTimeout = backend.ErrStartTimeout

// ErrNotRunning: Signal or SignalForeground was called while no cell ran.
var ErrNotRunning = errors.New("no cell running")

// StartError reports a failed Start with what the child wrote to stderr.
type StartError = backend.StartError
