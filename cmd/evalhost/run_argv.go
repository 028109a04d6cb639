package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/evalhost/evalhost/internal/trustdir"
)

// scriptFlagsHint follows the refusal of a flag before FILE, which may be
// one the script was meant to get: run's own flags end at FILE, as
// python3's options do.
const scriptFlagsHint = "A script's own flags go after FILE: evalhost run [FLAGS] FILE --flag VALUE (sys.argv[1:], as python3 FILE gives them)."

// commandLine is what run's positional arguments say, read as python3
// reads its own: the source (FILE, "-" for stdin, or "" for the -c cells
// alone or -m), the command line its cells see (sys.argv, a shell cell's
// $1...) and Python's __file__ for it, and the module -m runs.
type commandLine struct {
	source string
	argv   []string
	file   string
	module string
}

// moduleRun is run's -m MODULE and the arguments after it.
type moduleRun struct {
	name string
	args []string
}

// errModuleWithCode refuses -m after -c: python3 -c CODE -m M passes -m M
// to CODE, but run's -c does not end its flags (-c is repeatable), so
// the two would be ambiguous.
var errModuleWithCode = errors.New("-m MODULE and -c CODE: give one, as python3 runs one; for -c cells whose sys.argv holds -m, put it after --: evalhost run -c CODE -- -m X")

// cutModule splits run's arguments at -m MODULE (or -mMODULE, or -m after
// shorthands without a value, -um), which ends run's flags as FILE does:
// what follows MODULE is the module's sys.argv[1:], flags and "--"
// included, as python3 -m MODULE gives it. An -m after a positional
// argument, or after "--", is not run's. A flag of fs that takes a value,
// and a parameter flag, skip theirs (-c -m is the cell "-m"). mod is nil
// without -m; flags are the arguments before it (and -m's leading
// shorthands, -u of -um).
//
// A "--" that ends run's flags after a -c cell is the cells' too: python3
// -c CODE -- x gives ['-c', '--', 'x'], its options having ended at -c.
// run's flags go on after -c (it repeats), so the "--" still ends them,
// and flags holds it twice: pflag takes the first, fs.Args() starts with
// the second.
func cutModule(fs *pflag.FlagSet, args []string) (flags []string, mod *moduleRun, err error) {
	code := false // a -c cell came before
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" && code {
			return append(args[:i+1:i+1], args[i:]...), nil, nil
		}
		if a == "--" || a == "-" || !strings.HasPrefix(a, "-") {
			return args, nil, nil
		}
		bools, name, value, hasValue := paramFlagIn(fs, a)
		code = code || name == "-c" || name == "--code"
		if name == "-m" {
			rest := args[i+1:]
			if value == "" && len(rest) > 0 {
				value, rest = rest[0], rest[1:]
			}
			if value == "" {
				// python3 says "Argument expected for the -m option".
				return nil, nil, errors.New("-m needs a MODULE: evalhost run [FLAGS] -m MODULE [ARG...], as python3 -m")
			}
			flags = args[:i:i]
			if bools != "" {
				flags = append(flags, "-"+bools)
			}
			return flags, &moduleRun{value, append([]string(nil), rest...)}, nil
		}
		if spec, ok := paramFlagNames[name]; ok {
			i += spec.n
			if hasValue {
				i--
			}
		} else if takesValue(fs, a) {
			i++
		}
	}
	return args, nil, nil
}

// parseCommandLine reads pos, the arguments after run's flags (which end
// at the first positional argument, or at a "--" before it), as python3
// reads what follows its options. With -c cells (haveCode) there is no
// FILE, as python3 -c has none: argv is ["-c", pos...]. Else pos[0] is FILE
// (or "-") and argv all of pos, a "--" or a flag after FILE included, as
// python3 FILE -- a gives ['FILE', '--', 'a']. file is FILE's absolute
// path, as python3 3.9+ sets __file__: the physical working directory (as
// getcwd gives it, not $PWD's links) joined, not cleaned (a link's ".." is
// the link target's parent); "<stdin>" for "-". The runner names a
// relative FILE as given on 3.8, as python3 3.8 does (runner/argv.py). With -m (mod, whose
// arguments end run's, so pos is empty) argv is ["-m", ARG...], as python3
// has it until runpy puts the module's file first, and file "": runpy sets
// the module's own __file__.
func parseCommandLine(pos []string, haveCode bool, mod *moduleRun) (commandLine, error) {
	var cl commandLine
	if mod != nil {
		if haveCode {
			return cl, errModuleWithCode
		}
		cl.module = mod.name
		cl.argv = append([]string{"-m"}, mod.args...)
		return cl, nil
	}
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
			// python3 cannot open it there either ("can't open file").
			return cl, fmt.Errorf("cannot find %s: %w", trustdir.Shown(cl.source), cwdGoneError{err})
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
