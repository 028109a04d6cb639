package main

import (
	"io"
	"os"
	"strconv"

	"golang.org/x/term"
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
	// reads first, unless the environment sets them (every language's).
	env map[string]string
}

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
	if w, h, err := term.GetSize(size); err == nil && w > 0 && h > 0 {
		t.env = map[string]string{}
		if os.Getenv("COLUMNS") == "" {
			t.env["COLUMNS"] = strconv.Itoa(w)
		}
		if os.Getenv("LINES") == "" {
			t.env["LINES"] = strconv.Itoa(h)
		}
	}
	return t
}
