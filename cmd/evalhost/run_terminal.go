package main

import (
	"io"
	"os"
	"slices"
	"strconv"

	"golang.org/x/term"

	"github.com/evalhost/evalhost/sessions"
)

// runTerminal is what a one-shot run whose live output goes to a terminal
// tells its cells, which write to pipes.
type runTerminal struct {
	// fds are the ones (1, 2) shown on a terminal, for the Python cells
	// (sessions.Config.Terminal): sys.stdout.isatty() is true as under
	// python3, so libraries colour their output (the bytes reach the
	// terminal unchanged), and stdout is line-buffered.
	fds []int
	// env is its size as COLUMNS and LINES, which shutil.get_terminal_size
	// reads first, unless the environment sets them to a size (every
	// language's);
	// and, when stdout and stderr are both on it, run's FORCE_COLOR and
	// PYTHON_COLORS, which the sessions' environment leaves out: python3
	// 3.13+ colours its error reports on a terminal by them (NO_COLOR and
	// TERM pass everywhere), as libraries colour by FORCE_COLOR. Never
	// where an output is a pipe or a file, whose text they would colour.
	env map[string]string
}

// colorEnv are the variables runTerminal.env passes on from run's own.
var colorEnv = []string{"FORCE_COLOR", "PYTHON_COLORS"}

// terminalOf finds the terminal among stdout and stderr; the zero value
// when neither is one.
func terminalOf(stdout, stderr io.Writer) runTerminal {
	var t runTerminal
	size := -1
	for i, w := range []io.Writer{stdout, stderr} {
		f, ok := w.(*os.File)
		if !ok || !term.IsTerminal(int(f.Fd())) {
			continue
		}
		t.fds = append(t.fds, i+1)
		if size < 0 {
			size = int(f.Fd())
		}
	}
	if t.fds == nil {
		return t
	}
	set := func(name, v string) {
		if t.env == nil {
			t.env = map[string]string{}
		}
		t.env[name] = v
	}
	if w, h, err := term.GetSize(size); err == nil && w > 0 && h > 0 {
		// Where python3's shutil would ask the terminal (a value its
		// int() does not read as above 0: "abc", "0"), the cells get the
		// terminal's answer; their os.environ shows it in the value's place.
		if !sizeSet(os.Getenv("COLUMNS")) {
			set("COLUMNS", strconv.Itoa(w))
		}
		if !sizeSet(os.Getenv("LINES")) {
			set("LINES", strconv.Itoa(h))
		}
	}
	if len(t.fds) == 2 {
		for _, name := range colorEnv {
			if v, ok := os.LookupEnv(name); ok {
				set(name, v)
			}
		}
	}
	return t
}

// request is the eval's "terminal" for run --session: the streams on the
// terminal, and sessions.TerminalEnv as this command's one-shot run would
// give its cells (the session's interpreter was started by another
// command, maybe not at this terminal): the size where the command sets
// none (env), TERM and NO_COLOR as the command has them, FORCE_COLOR and
// PYTHON_COLORS only when stdout and stderr are both on it; one it would
// not have is unset (null). Nil when neither is on a terminal: the
// request says nothing, and the cells see none.
func (t runTerminal) request() map[string]any {
	if t.fds == nil {
		return nil
	}
	env := make(map[string]any, len(sessions.TerminalEnv))
	for name := range sessions.TerminalEnv {
		env[name] = nil
		if v, ok := os.LookupEnv(name); ok && (len(t.fds) == 2 || !slices.Contains(colorEnv, name)) {
			env[name] = fsJSON(v) // its bytes, as a one-shot run's cells take them
		}
	}
	for name, v := range t.env {
		env[name] = fsJSON(v)
	}
	return map[string]any{"stdout": slices.Contains(t.fds, 1), "stderr": slices.Contains(t.fds, 2), "env": env}
}
