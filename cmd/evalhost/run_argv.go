package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// scriptFlagsHint follows a refusal of a flag that may be the script's own:
// run takes its flags anywhere before --, after FILE too.
const scriptFlagsHint = "A script's own flags go after --: evalhost run FILE -- --flag VALUE (sys.argv)."

// commandLine is what run's positional arguments say, read as python3
// reads its own: the source (FILE, "-" for stdin, or "" for the -c cells
// alone) and the command line its cells see (sys.argv, a shell cell's $1...)
// and Python's __file__ for it.
type commandLine struct {
	source string
	argv   []string
	file   string
}

// parseCommandLine splits pos, run's positional arguments, at dash (the
// count before "--", or -1): FILE first, then the script's arguments; after
// "--" every argument is the script's, one that looks like a flag too, and
// the first is FILE when neither FILE nor -c came before it. argv is
// [FILE, ARGS...], ["-", ARGS...] or ["-c", ARGS...]; file is FILE's
// absolute path, as python3 3.9+ sets __file__ (the working directory
// joined, not cleaned: a link's ".." is the link target's parent), or
// "<stdin>".
func parseCommandLine(pos []string, dash int, haveCode bool) (commandLine, error) {
	before, after := pos, []string(nil)
	if dash >= 0 && dash <= len(pos) {
		before, after = pos[:dash], pos[dash:]
	}
	if len(before) == 0 && !haveCode && len(after) > 0 {
		before, after = after[:1], after[1:]
	}
	var cl commandLine
	if len(before) == 0 {
		cl.argv = append([]string{"-c"}, after...)
		return cl, nil
	}
	cl.source = before[0]
	cl.argv = append(append([]string{cl.source}, before[1:]...), after...)
	switch {
	case cl.source == "-":
		cl.file = "<stdin>"
	case filepath.IsAbs(cl.source):
		cl.file = cl.source
	default:
		wd, err := os.Getwd()
		if err != nil {
			return cl, fmt.Errorf("%s: %w", cl.source, err)
		}
		cl.file = strings.TrimSuffix(wd, string(filepath.Separator)) + string(filepath.Separator) + cl.source
	}
	return cl, nil
}
