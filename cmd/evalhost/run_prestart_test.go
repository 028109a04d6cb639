package main

import (
	"io"
	"slices"
	"testing"

	"github.com/spf13/pflag"

	"github.com/evalhost/evalhost/cmd/evalhost/internal/prestart"
)

// attachedByFlags says whether run's own flags in args (run's arguments)
// hold --session, read as parseRun reads them: -m, the parameter flags,
// then pflag. ok is false when they do not parse.
func attachedByFlags(args []string) (attached, ok bool) {
	var f runFlags
	fs, _ := newRunFlagSet(&f, io.Discard)
	fs.SetOutput(io.Discard)
	args, _, err := cutModule(fs, args)
	if err != nil {
		return false, false
	}
	if args, _, err = takeParamFlags(fs, args, true); err != nil {
		return false, false
	}
	if err := fs.Parse(args); err != nil {
		return false, false
	}
	return fs.Changed("session"), true
}

// prestart.Wanted reads run's flags without pflag (its init runs before
// pflag's): it must find run's own --session as parseRun does, and only
// it, for every flag of run's in each of its spellings (long, --name=V,
// shorthand, after shorthands that take no value and before one that
// takes one, a shorthand's attached value), with its values. A --session
// after FILE, -m MODULE, - or -- is the script's: the run is one-shot, and
// gets its spare reaper early.
func TestPrestartWantedReadsRunsFlags(t *testing.T) {
	var f runFlags
	fs, _ := newRunFlagSet(&f, io.Discard)
	var lines [][]string
	fs.VisitAll(func(fl *pflag.Flag) {
		if fl.Name == "session" {
			return
		}
		n := 0 // how many values it takes
		if spec, ok := paramFlagNames["--"+fl.Name]; ok {
			n = spec.n
		} else if fl.NoOptDefVal == "" {
			n = 1
		}
		val := map[string]string{"int": "1", "duration": "1s"}[fl.Value.Type()]
		if val == "" {
			val = "v"
		}
		vals := slices.Repeat([]string{val}, n)
		forms := [][]string{append([]string{"--" + fl.Name}, vals...)}
		if n > 0 {
			forms = append(forms, append([]string{"--" + fl.Name + "=" + val}, vals[1:]...))
		}
		if s := fl.Shorthand; s != "" {
			forms = append(forms, append([]string{"-" + s}, vals...), append([]string{"-u" + s}, vals...))
			if n > 0 {
				forms = append(forms, append([]string{"-" + s + val}, vals[1:]...))
			} else {
				forms = append(forms, []string{"-" + s + "W", "v"}) // then one that takes a value
			}
		}
		for _, form := range forms {
			// --session run's after the flag, then the script's after FILE.
			lines = append(lines, append(slices.Clone(form), "--session", "s", "x.py"))
			lines = append(lines, append(slices.Clone(form), "x.py", "--session", "s"))
		}
	})
	lines = append(lines,
		[]string{"-m", "mod", "--session", "s"}, []string{"-um", "mod", "--session", "s"}, []string{"-mmod", "--session", "s"},
		[]string{"-", "--session", "s"}, []string{"--", "--session", "s"}, []string{"-c", "1", "--", "--session", "s"},
		[]string{"-c", "--session", "x.py", "--session", "s"}, []string{"--session=s", "x.py"})
	for _, args := range lines {
		attached, ok := attachedByFlags(args)
		if !ok {
			t.Errorf("run %q does not parse", args)
			continue
		}
		if got := prestart.Wanted(append([]string{"run"}, args...)); got == attached {
			t.Errorf("prestart.Wanted(run %q) = %v; run's flags hold --session: %v", args, got, attached)
		}
	}
}
