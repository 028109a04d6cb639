package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/evalhost/evalhost/internal/trustdir"
	"github.com/evalhost/evalhost/notebook"
	"github.com/evalhost/evalhost/params"
)

// paramFlag is one parameter flag as given: "-p" NAME VALUE, "-r" NAME
// VALUE, "-f" FILE, "-y" YAML, "-P" NAME:VALUE.
type paramFlag struct {
	flag string
	args []string
}

// paramFlagNames maps each spelling (papermill's and quarto's) to its
// short form and how many arguments it takes.
var paramFlagNames = map[string]struct {
	short string
	n     int
}{
	"-p": {"-p", 2}, "--parameters": {"-p", 2},
	"-r": {"-r", 2}, "--parameters_raw": {"-r", 2}, "--parameters-raw": {"-r", 2},
	"-f": {"-f", 1}, "--parameters_file": {"-f", 1}, "--parameters-file": {"-f", 1},
	"-y": {"-y", 1}, "--parameters_yaml": {"-y", 1}, "--parameters-yaml": {"-y", 1},
	"-P": {"-P", 1}, "--execute-param": {"-P", 1},
}

// registerParamFlags lists the parameter flags in fs's help. They are
// taken out of the command line before fs parses it (-p and -r take two
// arguments, which pflag cannot), so these values stay empty.
func registerParamFlags(fs *pflag.FlagSet) {
	repeatedVarP(fs, new([]string), "parameters", "p", "NAME VALUE: a parameter, typed as papermill types it (int, float, True/False/None, else a string); repeatable")
	repeatedVarP(fs, new([]string), "parameters_raw", "r", "NAME VALUE: a parameter kept a string; repeatable")
	repeatedVarP(fs, new([]string), "parameters_file", "f", "FILE: parameters from a YAML file; repeatable")
	repeatedVarP(fs, new([]string), "parameters_yaml", "y", "YAML: parameters from a YAML mapping; repeatable")
	repeatedVarP(fs, new([]string), "execute-param", "P", "NAME:VALUE or NAME=VALUE: a parameter as quarto render -P takes it (VALUE read as YAML); repeatable")
}

// takeParamFlags removes the parameter flags from args, in order, leaving
// the rest for fs; the value of another flag of fs (-c -p) is not one. A
// parameter flag after shorthands of fs that take no value (-uP x:1) is
// taken out of its argument, which keeps them (-u).
// With untilPositional (fs parses with SetInterspersed(false)) they end at
// the first positional argument, as fs's own do: what follows is a
// script's (run FILE -p 8080).
func takeParamFlags(fs *pflag.FlagSet, args []string, untilPositional bool) (rest []string, flags []paramFlag, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || untilPositional && (a == "-" || !strings.HasPrefix(a, "-")) {
			return append(rest, args[i:]...), flags, nil
		}
		if a == "-" || !strings.HasPrefix(a, "-") { // a positional argument (nb run's FILE), no flag
			rest = append(rest, a)
			continue
		}
		bools, name, value, hasValue := paramFlagIn(fs, a)
		spec, ok := paramFlagNames[name]
		if !ok {
			rest = append(rest, a)
			if takesValue(fs, a) && i+1 < len(args) {
				i++
				rest = append(rest, args[i])
			}
			continue
		}
		if bools != "" {
			rest = append(rest, "-"+bools)
		}
		var vals []string
		if hasValue {
			vals = append(vals, value)
		}
		for len(vals) < spec.n && i+1 < len(args) {
			i++
			vals = append(vals, args[i])
		}
		if len(vals) < spec.n {
			want := map[string]string{"-p": "NAME VALUE", "-r": "NAME VALUE", "-f": "FILE", "-y": "YAML", "-P": "NAME:VALUE"}[spec.short]
			return nil, nil, fmt.Errorf("%s needs %s", name, want)
		}
		flags = append(flags, paramFlag{spec.short, vals})
	}
	return rest, flags, nil
}

// paramFlagIn splits a flag argument as pflag reads it: a long one by
// splitFlag, a short one by shortCluster into the shorthands without a
// value that lead it (bools) and the flag after them, with its attached
// value.
func paramFlagIn(fs *pflag.FlagSet, a string) (bools, name, value string, hasValue bool) {
	if strings.HasPrefix(a, "--") || len(a) < 2 {
		name, value, hasValue = splitFlag(a)
		return "", name, value, hasValue
	}
	bools, c, value := shortCluster(fs, a)
	if c == 0 {
		return bools, "", "", false
	}
	return bools, "-" + string(c), value, value != ""
}

// splitFlag splits a flag argument into its name and the value it carries:
// --name=VALUE, or a shorthand's attached one, -fFILE.
func splitFlag(a string) (name, value string, hasValue bool) {
	if !strings.HasPrefix(a, "--") && len(a) > 2 && a[0] == '-' {
		return a[:2], a[2:], true
	}
	return strings.Cut(a, "=")
}

// takesValue says whether a is a flag of fs that takes the next argument:
// --name, or -x, alone or after shorthands without a value (-uW).
func takesValue(fs *pflag.FlagSet, a string) bool {
	var f *pflag.Flag
	switch {
	case strings.HasPrefix(a, "--") && !strings.Contains(a, "="):
		f = fs.Lookup(a[2:])
	case len(a) >= 2 && a[0] == '-' && a[1] != '-':
		if _, c, value := shortCluster(fs, a); c != 0 && value == "" {
			f = fs.ShorthandLookup(string(c))
		}
	}
	return f != nil && f.NoOptDefVal == ""
}

// buildParams merges the flags as papermill's CLI does: the files, then
// the YAML texts, then quarto's -P, then -p, then -r, each in order. Nil
// when there are none.
func buildParams(flags []paramFlag) (*params.Params, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	var p params.Params
	for _, kind := range []string{"-f", "-y", "-P", "-p", "-r"} {
		for _, f := range flags {
			if f.flag != kind {
				continue
			}
			var err error
			switch kind {
			case "-f":
				if f.args[0] == "-" {
					return nil, fmt.Errorf("-f -: give a YAML file's path (for YAML text, use -y)")
				}
				var data []byte
				if data, err = readPiped(f.args[0], nil, maxScriptBytes); err != nil {
					return nil, fmt.Errorf("-f: %w", err) // it names the file
				}
				err = p.MergeYAML(data, "-f "+f.args[0])
			case "-y":
				err = p.MergeYAML([]byte(f.args[0]), "-y")
			case "-P":
				if err = p.SetQuarto(f.args[0]); err != nil && !strings.ContainsAny(f.args[0], ":=") {
					err = fmt.Errorf("%w (python3's -P, safe path, is not available: run's -P is a parameter, as quarto's)", err)
				}
			case "-p":
				err = p.SetTyped(f.args[0], f.args[1])
			case "-r":
				err = p.SetRaw(f.args[0], f.args[1])
			}
			if err != nil {
				return nil, err
			}
		}
	}
	return &p, nil
}

// missingValueHint is what follows run's refusal of a parameter flag left
// without its arguments (takeParamFlags): nothing came after it, FILE
// neither, so no script was to get it, but -c cells may have been (python3
// -c CODE -y gives them ['-c', '-y']); run's flags go on after -c, so a
// cell's flag goes after "--" (errModuleWithCode's way for -m). Nothing
// without a -c cell before it.
func missingValueHint(fs *pflag.FlagSet, args []string) string {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || a == "-" || !strings.HasPrefix(a, "-") {
			break
		}
		if _, name, _, _ := paramFlagIn(fs, a); name == "-c" || name == "--code" {
			return "For the -c cells' sys.argv, put their arguments after --: evalhost run -c CODE -- ARG..., as python3 -c CODE -- ARG... gives them.\n"
		}
		if takesValue(fs, a) {
			i++
		}
	}
	return ""
}

// paramsHint is what follows run's refusal of a parameter flag (buildParams'
// err): scriptFlagsHint where the flag may have been the script's, given
// before FILE (-p, -f, -y, -r and -P are common flags of scripts too): its
// text was no parameters (run -p 8080 server.py, -y install.py), or -f's
// file could not be read (a script's -f out.txt). Nothing where it was
// meant as a parameter (a keyword for a NAME): the error says all.
func paramsHint(err error) string {
	var unread *notebook.FileError
	if errors.Is(err, params.ErrNotParameters) || errors.As(err, &unread) {
		return scriptFlagsHint + "\n"
	}
	return ""
}

// checkValueTookFile refuses a command line with nothing to run whose last
// -p or -r took a file as its VALUE ("run -p alpha report.py": papermill's
// -p takes NAME VALUE), naming that mistake instead of run's bare "nothing
// to run".
func checkValueTookFile(cl commandLine, f runFlags, flags []paramFlag) error {
	if cl.source != "" || cl.module != "" || len(f.code) > 0 || len(flags) == 0 {
		return nil
	}
	last := flags[len(flags)-1]
	if len(last.args) != 2 {
		return nil
	}
	if st, err := os.Stat(last.args[1]); err != nil || st.IsDir() {
		return nil
	}
	return fmt.Errorf("nothing to run: %s %s %s took the file %s as the parameter's VALUE (%s takes NAME VALUE); give FILE after it: evalhost run %s %s VALUE %s",
		last.flag, trustdir.Shown(last.args[0]), trustdir.Shown(last.args[1]), trustdir.Shown(last.args[1]), last.flag,
		last.flag, trustdir.ShellQuote(last.args[0]), trustdir.ShellQuote(last.args[1]))
}
