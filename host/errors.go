package host

import "github.com/evalhost/evalhost/backend"

// ErrStartTimeout: the runner did not send ready within Options.StartTimeout.
var ErrStartTimeout = backend.ErrStartTimeout

// StartError reports a failed Start with what the child wrote to stderr.
type StartError = backend.StartError
