package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// scriptFlagsHint follows the refusal of a flag before FILE, which may be
// one the script was meant to get: run's own flags end at FILE, as
// python3's options do.
const scriptFlagsHint = "A script's own flags go after FILE: evalhost run [FLAGS] FILE --flag VALUE (sys.argv[1:], as python3 FILE gives them)."

// commandLine is what run's positional arguments say, read as python3
// reads its own: the source (FILE, "-" for stdin, or "" for the -c cells
// alone) and the command line its cells see (sys.argv, a shell cell's $1...)
// and Python's __file__ for it.
type commandLine struct {
	source string
	argv   []string
	file   string
}

// parseCommandLine reads pos, the arguments after run's flags (which end
// at the first positional argument, or at a "--" before it), as python3
// reads what follows its options. With -c cells (haveCode) there is no
// FILE, as python3 -c has none: argv is ["-c", pos...]. Else pos[0] is FILE
// (or "-") and argv all of pos, a "--" or a flag after FILE included, as
// python3 FILE -- a gives ['FILE', '--', 'a']. file is FILE's absolute
// path, as python3 3.9+ sets __file__: the physical working directory (as
// getcwd gives it, not $PWD's links) joined, not cleaned (a link's ".." is
// the link target's parent); "<stdin>" for "-".
func parseCommandLine(pos []string, haveCode bool) (commandLine, error) {
	var cl commandLine
	if haveCode || len(pos) == 0 {
		cl.argv = append([]string{"-c"}, pos...)
		return cl, nil
	}
	cl.source = pos[0]
	cl.argv = append([]string(nil), pos...)
	switch {
	case cl.source == "-":
		cl.file = "<stdin>"
	case filepath.IsAbs(cl.source):
		cl.file = cl.source
	default:
		wd, err := physicalWd()
		if err != nil {
			return cl, fmt.Errorf("%s: %w", cl.source, err)
		}
		cl.file = strings.TrimSuffix(wd, string(filepath.Separator)) + string(filepath.Separator) + cl.source
	}
	return cl, nil
}

// physicalWd is the working directory as getcwd(3) gives it, which python3
// joins to a relative FILE: os.Getwd prefers $PWD, the shell's logical
// path, which may go through links.
func physicalWd() (string, error) {
	if syscall.ImplementsGetwd {
		if wd, err := syscall.Getwd(); err == nil {
			return wd, nil
		}
	}
	return os.Getwd()
}
