package sessions

import (
	"errors"
	"fmt"
	"strings"
)

// ErrPythonArgs is matched by a Config.PythonArgs that holds what is not
// one of the interpreter options a runner's interpreter may take, and by a
// starter that takes none (a gateway kernel's).
var ErrPythonArgs = errors.New("interpreter options refused")

// PythonArgsError says which of Config.PythonArgs was refused, and why.
type PythonArgsError struct {
	Arg string
	Why string
}

func (e *PythonArgsError) Error() string {
	return fmt.Sprintf("interpreter option %q: %s", e.Arg, e.Why)
}

func (e *PythonArgsError) Unwrap() []error { return []error{ErrPythonArgs, ErrBadRequest} }

// pythonFlags are python3's options without a value that change how the
// user's code runs and leave the runner's command line alone (no -c, -m,
// -i, -x, which would run or skip code, nor -P, which evalhost run keeps
// for papermill's parameters).
const pythonFlags = "bBEIOqsSu"

// PythonArgsHelp lists what CheckPythonArgs accepts.
const PythonArgsHelp = "-b -B -E -I -O -q -s -S -u, -W ARG and -X OPT, as python3 takes them"

// CheckPythonArgs says whether args are interpreter options the runner's
// starter may put before runner.py (Config.PythonArgs): each an option of
// PythonArgsHelp, or several in one argument (-uB, -OO), a -W or -X with
// its value attached (-Werror) or as the next argument, as python3 reads
// them. A value is never empty, so none can take runner.py's place.
func CheckPythonArgs(args []string) error {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if len(a) < 2 || a[0] != '-' || a[1] == '-' {
			return &PythonArgsError{Arg: a, Why: "not an interpreter option; want " + PythonArgsHelp}
		}
		for j := 1; j < len(a); j++ {
			c := a[j]
			if strings.IndexByte(pythonFlags, c) >= 0 {
				continue
			}
			if c != 'W' && c != 'X' {
				return &PythonArgsError{Arg: a, Why: fmt.Sprintf("-%c is not one evalhost passes; want %s", c, PythonArgsHelp)}
			}
			if j+1 == len(a) { // the value is the next argument
				if i++; i == len(args) || args[i] == "" {
					return &PythonArgsError{Arg: a, Why: fmt.Sprintf("-%c needs a value", c)}
				}
			}
			break
		}
	}
	return nil
}

// errGatewayPythonArgs refuses interpreter options at a gateway kernel's
// start: its command line is its kernelspec's.
var errGatewayPythonArgs = fmt.Errorf("%w: a gateway kernel's interpreter runs as its kernelspec says; Config.PythonArgs apply to the runner's interpreters only", ErrPythonArgs)
