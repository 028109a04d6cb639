package main

import (
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/term"
)

// terminalEnv is what a one-shot run whose live output goes to a terminal
// tells its Python cells, which write to pipes: EVALHOST_TTY names the fds
// (1, 2) the host shows on a terminal, so sys.stdout.isatty() is true as
// under python3 and libraries colour their output (the bytes reach the
// terminal unchanged); COLUMNS and LINES are its size, which
// shutil.get_terminal_size reads first, unless the environment sets them.
// Nil when neither stream is a terminal.
func terminalEnv(stdout, stderr io.Writer) map[string]string {
	var fds []string
	size := -1
	for i, w := range []io.Writer{stdout, stderr} {
		f, ok := w.(*os.File)
		if !ok || !term.IsTerminal(int(f.Fd())) {
			continue
		}
		fds = append(fds, strconv.Itoa(i+1))
		if size < 0 {
			size = int(f.Fd())
		}
	}
	if fds == nil {
		return nil
	}
	env := map[string]string{"EVALHOST_TTY": strings.Join(fds, ",")}
	if w, h, err := term.GetSize(size); err == nil && w > 0 && h > 0 {
		if os.Getenv("COLUMNS") == "" {
			env["COLUMNS"] = strconv.Itoa(w)
		}
		if os.Getenv("LINES") == "" {
			env["LINES"] = strconv.Itoa(h)
		}
	}
	return env
}
