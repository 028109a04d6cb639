package main

import (
	"io"
	"os"

	"golang.org/x/term"
)

// scriptStdin is what a one-shot run's Python cells read as stdin: run's
// own when it is a pipe or a file (cat data.csv | evalhost run clean.py),
// as python3 FILE reads it, on a descriptor of its own (dupFile) the
// caller closes; nil for a terminal, where input() would wait for a
// person (cells' stdin is not interactive: it fails at once), with
// withheld saying so (withheldTerminal), and for a reader that is no
// file. Under FILE "-" the cells came on it, read to its end: the script
// finds it at its end, as python3 - does (input() raises EOFError,
// sys.stdin.read() returns an empty string).
func scriptStdin(stdin io.Reader) (f *os.File, withheld string) {
	f, ok := stdin.(*os.File)
	switch {
	case !ok:
		return nil, ""
	case term.IsTerminal(int(f.Fd())):
		return nil, withheldTerminal
	}
	return dupFile(f), ""
}

// withheldTerminal and withheldSession say why a cell's sys.stdin and
// input() refuse (sessions.Config.StdinWithheld), after "sys.stdin is not
// given to the script: ", where python3 would read what it was given:
// run's terminal (without --tty, where python3 would wait for typing), and
// what is piped into run --session, whose interpreter lives in the
// background process (reading empty, a script would take that for input
// that had none).
const (
	withheldTerminal = "evalhost run's stdin is a terminal; pipe the input in (... | evalhost run FILE), or give the script the terminal with --tty"
	withheldSession  = "run --session's interpreter lives in the background process, which cannot pass it the command's stdin; have the script open a file, or run without --session"
)
