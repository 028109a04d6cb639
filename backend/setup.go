package backend

import (
	"strings"

	"github.com/evalhost/evalhost/frames"
)

// SetupErrorPrefix starts the Evalue of the error frame a Jupyter kernel's
// backend emits when a request's cwd, env or argv could not be applied
// (the kernel's own exception named in Ename); the runner's is Ename
// "RequestError" with no traceback but its one line, which tells it from a
// cell's own exception of that name (httpx.RequestError), whose traceback
// has frames. Either way the cell's code did not run.
const SetupErrorPrefix = "evalhost could not apply the cell's cwd/env: "

// IsSetupError says whether f reports that a request's cwd, env or argv
// could not be applied, so that its cell did not run and the interpreter
// still lacks them.
func IsSetupError(f frames.Frame) bool {
	if f.Type != frames.TypeError {
		return false
	}
	runners := f.Ename == "RequestError" && len(f.Traceback) <= 1 && (len(f.Traceback) == 0 || f.Traceback[0] == "RequestError: "+f.Evalue)
	return runners || strings.HasPrefix(f.Evalue, SetupErrorPrefix)
}
