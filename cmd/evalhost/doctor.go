package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/evalhost/evalhost/config"
	"github.com/evalhost/evalhost/internal/trustdir"
	"github.com/evalhost/evalhost/sessions"
)

// optionalModules are what some features need in the session's interpreter.
var optionalModules = []struct{ module, feature, install string }{
	{"matplotlib", "plots sent as images", "python -m pip install matplotlib"},
	{"IPython", "full IPython mode (--ipython)", "python -m pip install ipython"},
	{"kernel_gateway", "the Jupyter gateway backend", "python -m pip install jupyter_kernel_gateway ipykernel"},
	{"ipykernel", "the Jupyter gateway backend", "python -m pip install jupyter_kernel_gateway ipykernel"},
}

func doctorMain(args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("doctor", pflag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: evalhost doctor [flags]\n\nWhich interpreter evalhost would use, its version, the runner's start time and what is missing.\n\nFlags:\n%s", fs.FlagUsages())
	}
	python := fs.String("python", "", "python interpreter to check")
	cwd := fs.String("cwd", ".", "directory whose interpreter to check (its .venv counts)")
	if code, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "evalhost doctor: takes no arguments, got %q; use --python or --cwd\n", fs.Args())
		return exitUsage
	}
	if err := checkCwdFlag(*cwd); err != nil {
		// A usage error, as run's and nb run's --cwd: no check was made.
		fmt.Fprintf(stderr, "evalhost doctor: %v\n", err)
		return exitUsage
	}
	ok := true
	fmt.Fprintf(stdout, "evalhost %s\n", version)
	home, err := config.Home()
	if err != nil {
		fmt.Fprintf(stdout, "home: REFUSED\n  %v\n", err)
		return exitFailed
	}
	fmt.Fprintf(stdout, "home: %s\n", home)
	if !printSafeDirectories(stdout, home) {
		ok = false
	}
	py, err := sessions.ResolveInterpreter(*python, *cwd, home, os.Getenv, 0)
	if err != nil {
		fmt.Fprintf(stdout, "python: MISSING\n  %v\n", err)
		return exitFailed
	}
	printResolution(stdout, py)
	if start, err := timeRunnerStart(home, py.Path, *cwd); err != nil {
		ok = false
		fmt.Fprintf(stdout, "runner: FAILED: %v\n", err)
	} else {
		fmt.Fprintf(stdout, "runner: starts and runs a cell in %s\n", start.Round(100*time.Microsecond))
	}
	if bash, err := exec.LookPath("bash"); err != nil {
		ok = false
		fmt.Fprintln(stdout, "bash: MISSING (needed for sh cells)")
	} else {
		fmt.Fprintf(stdout, "bash: %s\n", bash)
	}
	for _, m := range optionalModules {
		if err := exec.Command(py.Path, "-c", "import "+m.module).Run(); err != nil {
			fmt.Fprintf(stdout, "%s: not installed (needed for %s: %s)\n", m.module, m.feature, m.install)
		} else {
			fmt.Fprintf(stdout, "%s: installed\n", m.module)
		}
	}
	if !ok {
		return exitFailed
	}
	return exitOK
}

// timeRunnerStart measures a fresh runner from start to its first result.
func timeRunnerStart(home, python, cwd string) (time.Duration, error) {
	reg := sessions.New(sessions.Config{Home: home, Python: python})
	defer reg.Close()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := reg.Eval(ctx, sessions.Request{Cwd: cwd, Mode: sessions.ModePerCall,
		Cells: []sessions.Cell{{Language: sessions.LangPython, Code: "1+1"}}}, nil)
	if err != nil {
		return 0, err
	}
	if res.Status != sessions.StatusOK {
		return 0, fmt.Errorf("status %s: %s %s", res.Status, res.Cells[0].Message, strings.TrimSpace(res.Cells[0].Output.Text))
	}
	return time.Since(start), nil
}

// printResolution says which interpreter was chosen, how its executable
// was found and, for a version-manager shim, what its cached answer
// depends on: a change to any of these probes the shim again.
func printResolution(w io.Writer, py sessions.Interpreter) {
	ver := py.Version
	if ver == "" {
		ver = "version reported at start"
	}
	fmt.Fprintf(w, "python: %s (%s, from %s)\n", py.Path, ver, py.Source)
	fmt.Fprintf(w, "  resolved: %s\n", py.Resolved)
	for _, k := range py.Key {
		fmt.Fprintf(w, "  depends on: %s\n", k)
	}
}

// printSafeDirectories says which project directories of other users the
// user trusts, and what is wrong with the list; false when it cannot be
// used at all.
func printSafeDirectories(w io.Writer, home string) bool {
	safe := sessions.SafeDirectories(home)
	listed, err := safe.Listed()
	switch {
	case err != nil:
		fmt.Fprintf(w, "safe directories: UNUSABLE\n  %v\n", err)
		return false
	case len(listed) == 0:
		fmt.Fprintf(w, "safe directories: none (%s)\n", safe.File())
		return true
	}
	fmt.Fprintf(w, "safe directories: %s\n", safe.File())
	for _, l := range listed {
		fmt.Fprintf(w, "  %s: %s\n", l.Entry, trusts(l))
	}
	return true
}

// trusts says whom an entry trusts and where, so the user sees the uid an
// entry stands for now, which is not written in it.
func trusts(l trustdir.Listed) string {
	at := ""
	if l.Dir != "" && l.Dir != filepath.Clean(strings.TrimSuffix(l.Entry, "/*")) {
		at = " (" + l.Dir + ")"
	}
	switch {
	case l.Unusable != nil:
		return fmt.Sprintf("waives nothing: %v", l.Unusable)
	case l.Entry == "*":
		return "trusts every owner, everywhere"
	case l.Owner < 0:
		return "trusts every owner under it" + at
	}
	return fmt.Sprintf("trusts uid %d%s with it%s", l.Owner, userName(l.Owner), at)
}

// userName is " (name)" for uid, "" when it has none.
func userName(uid int) string {
	if u, err := user.LookupId(strconv.Itoa(uid)); err == nil && u.Username != "" {
		return " (" + u.Username + ")"
	}
	return ""
}
