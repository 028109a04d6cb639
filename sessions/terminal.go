package sessions

import (
	"fmt"
	"maps"
	"slices"

	"github.com/evalhost/evalhost/frames"
)

// TerminalEnv are the variables a Request.Terminal may set for its cells:
// the terminal's size, which shutil.get_terminal_size reads first, and
// what decides colours (python3 3.13+'s _colorize, and libraries):
// the terminal's TERM and the command's NO_COLOR, FORCE_COLOR and
// PYTHON_COLORS. A session's interpreter has the environment of the
// command that started it, which may have shown no terminal.
var TerminalEnv = map[string]bool{"COLUMNS": true, "LINES": true, "TERM": true,
	"NO_COLOR": true, "FORCE_COLOR": true, "PYTHON_COLORS": true}

// checkTerminal refuses a Terminal that names an fd other than 1 and 2,
// or a variable TerminalEnv does not (the first in sorted order); its copy, which replaces the
// caller's, leaves out of Env the names r.Env sets (those the request's
// own env gives its cells, as a one-shot run's --env wins over the
// terminal's size) and names the request (Terminal.Request, a nonce): its
// cells are one script, whose change to a variable lasts into its later
// cells as in python3 at a terminal.
func (r *Request) checkTerminal() error {
	t := r.Terminal
	if t == nil {
		return nil
	}
	for _, fd := range t.Fds {
		if fd != 1 && fd != 2 {
			return fmt.Errorf("%w: terminal: fd %d is not 1 (stdout) or 2 (stderr)", ErrBadRequest, fd)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(t.Env)) { // the same error every time
		if !TerminalEnv[name] {
			return fmt.Errorf("%w: terminal: %q is not one of COLUMNS, LINES, TERM, NO_COLOR, FORCE_COLOR and PYTHON_COLORS", ErrBadRequest, name)
		}
	}
	env := t.Env
	if len(r.Env) > 0 {
		env = maps.Clone(t.Env)
		for name := range r.Env {
			delete(env, name)
		}
	}
	r.Terminal = &frames.Terminal{Fds: t.Fds, Env: env, Request: newRunNonce()}
	return nil
}
