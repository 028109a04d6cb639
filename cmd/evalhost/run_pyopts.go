package main

import (
	"strings"

	"github.com/spf13/pflag"
)

// pyOpts are python3's interpreter options that run takes before FILE,
// -c or -m, as python3 does (python3 -u -W error train.py), for the
// interpreter it starts (sessions.Config.PythonArgs). Each is named after
// the sys.flags field it sets.
type pyOpts struct {
	unbuffered, dontWriteBytecode, ignoreEnvironment bool
	noUserSite, noSite, isolated, quiet              bool
	optimize, bytesWarning                           int
	warnOptions, xOptions                            []string
}

func (o *pyOpts) register(fs *pflag.FlagSet) {
	fs.BoolVarP(&o.unbuffered, "unbuffered", "u", false, "python3 -u: the cells' stdout and stderr unbuffered")
	fs.BoolVarP(&o.dontWriteBytecode, "dont-write-bytecode", "B", false, "python3 -B: imports write no .pyc files")
	fs.CountVarP(&o.optimize, "optimize", "O", "python3 -O: asserts and __debug__ code off; -OO also drops docstrings")
	fs.CountVarP(&o.bytesWarning, "bytes-warning", "b", "python3 -b: warn of str(bytes) and bytes == str; -bb makes it an error")
	fs.BoolVarP(&o.ignoreEnvironment, "ignore-environment", "E", false, "python3 -E: ignore PYTHON* variables (PYTHONPATH...)")
	fs.BoolVarP(&o.noUserSite, "no-user-site", "s", false, "python3 -s: no user site-packages on sys.path")
	fs.BoolVarP(&o.noSite, "no-site", "S", false, "python3 -S: no import site (no site-packages, no exit() builtins)")
	fs.BoolVarP(&o.isolated, "isolated", "I", false, "python3 -I: -E -s, and neither the script's directory nor the cwd on sys.path")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "python3 -q (nothing for a script)")
	repeatedVarP(fs, &o.warnOptions, "warn", "W", "python3 -W ARG: a warnings filter (error, ignore, once::UserWarning...); repeatable")
	repeatedVarP(fs, &o.xOptions, "xoption", "X", "python3 -X OPT: an implementation option (dev, utf8, importtime...); repeatable")
}

// args are the options as python3's command line: sessions.CheckPythonArgs
// takes them.
func (o *pyOpts) args() []string {
	var out []string
	for _, f := range []struct {
		on   bool
		flag string
	}{{o.unbuffered, "-u"}, {o.dontWriteBytecode, "-B"}, {o.ignoreEnvironment, "-E"},
		{o.noUserSite, "-s"}, {o.noSite, "-S"}, {o.isolated, "-I"}, {o.quiet, "-q"}} {
		if f.on {
			out = append(out, f.flag)
		}
	}
	if o.optimize > 0 {
		out = append(out, "-"+strings.Repeat("O", o.optimize))
	}
	if o.bytesWarning > 0 {
		out = append(out, "-"+strings.Repeat("b", o.bytesWarning))
	}
	for _, w := range o.warnOptions {
		out = append(out, "-W", w)
	}
	for _, x := range o.xOptions {
		out = append(out, "-X", x)
	}
	return out
}

// given lists the options set, as python3's command line, for a refusal.
func (o *pyOpts) given() string {
	return strings.Join(o.args(), " ")
}

// shortCluster reads a, an argument of one dash, as pflag does: its leading
// letters are shorthands of fs that take no value (-uB, -OO); the first
// letter that is not one is c (0 when there is none), with the rest of a,
// its attached value (-Werror, -mjson.tool), or "" when its value, if it
// takes one, is the next argument.
func shortCluster(fs *pflag.FlagSet, a string) (bools string, c byte, value string) {
	for i := 1; i < len(a); i++ {
		f := fs.ShorthandLookup(a[i : i+1])
		if f == nil || f.NoOptDefVal == "" {
			return a[1:i], a[i], a[i+1:]
		}
	}
	return a[1:], 0, ""
}
