package prestart

import (
	"os"

	"github.com/evalhost/evalhost/internal/reaper/launch"
)

func init() {
	if Wanted(os.Args[1:]) {
		launch.Begin()
	}
}

// Wanted says whether the command line is a run that starts its own
// interpreter: `run` without --session among run's own flags (an attached
// run's background process has the interpreter). run's flags end as
// cmd/evalhost reads them (run_argv.go): at FILE (the first argument that
// is neither a flag nor a flag's value), "-", "--" or -m MODULE; what
// follows is the script's, a --session there included (run x.py --session
// s is a one-shot run). A flag's values are skipped (argFlags,
// argShorthand: -p and -r take two), so a --session that is another flag's
// value (-c --session) is not one. pflag is not used here: it is not
// initialised yet, and would make this init wait for reflect; cmd/evalhost's
// tests hold these rules to run's flag set.
func Wanted(args []string) bool {
	if len(args) == 0 || args[0] != "run" {
		return false
	}
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" || len(a) < 2 || a[0] != '-' {
			return true // run's flags ended: FILE, "-" or "--"
		}
		if a == "--session" || hasPrefix(a, "--session=") {
			return false
		}
		n, end := argsOf(a)
		if end {
			return true // -m MODULE: the module's arguments follow
		}
		i += n
	}
	return true
}

// argsOf says how many of the arguments after flag argument a are its
// values, and whether a ends run's flags (-m).
func argsOf(a string) (n int, end bool) {
	if a[1] == '-' {
		name, attached := a[2:], false
		for j := 0; j < len(name); j++ {
			if name[j] == '=' {
				name, attached = name[:j], true
				break
			}
		}
		n = argFlags(name)
		if attached && n > 0 {
			n--
		}
		return n, false
	}
	// A cluster of shorthands: those that take no value (-uB), then at
	// most one that does, its value the rest of the argument (-Werror) or
	// the next one.
	for j := 1; j < len(a); j++ {
		switch c := a[j]; c {
		case 'u', 'B', 'O', 'b', 'E', 's', 'S', 'I', 'q':
			continue
		case 'm':
			return 0, true
		default:
			n = argShorthand(c)
			if j+1 < len(a) && n > 0 {
				n--
			}
			return n, false
		}
	}
	return 0, false
}

// argFlags is how many arguments run's long flag name takes: 0 for one
// that takes none, or that run does not have (pflag refuses it).
func argFlags(name string) int {
	switch name {
	case "code", "timeout", "cwd", "python", "max-output", "images-dir", "language", "session",
		"backend", "grace", "env", "tool", "warn", "xoption", "cpuprofile",
		"parameters_file", "parameters-file", "parameters_yaml", "parameters-yaml", "execute-param":
		return 1
	case "parameters", "parameters_raw", "parameters-raw":
		return 2
	}
	return 0
}

// argShorthand is how many arguments run's shorthand c takes (-m aside).
func argShorthand(c byte) int {
	switch c {
	case 'c', 'W', 'X', 'f', 'y', 'P':
		return 1
	case 'p', 'r':
		return 2
	}
	return 0
}

func hasPrefix(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }
