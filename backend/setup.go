package backend

import (
	"strings"

	"github.com/evalhost/evalhost/frames"
)

// SetupErrorPrefix starts the Evalue of the error frame a Jupyter kernel's
// backend emits when a request's cwd, env or argv could not be applied
// (the kernel's own exception named in Ename); the runner's is Ename
// "RequestError". Either way the cell's code did not run.
const SetupErrorPrefix = "evalhost could not apply the cell's cwd/env: "

// IsSetupError says whether f reports that a request's cwd, env or argv
// could not be applied, so that its cell did not run and the interpreter
// still lacks them.
func IsSetupError(f frames.Frame) bool {
	return f.Type == frames.TypeError && (f.Ename == "RequestError" || strings.HasPrefix(f.Evalue, SetupErrorPrefix))
}
