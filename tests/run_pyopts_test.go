package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pyoptsScripts are the scripts TestRunPythonOptionsAsPython runs: each
// prints what its option changes.
var pyoptsScripts = map[string]string{
	// A write to fd 1 beside sys.stdout's: before the print's bytes only
	// when stdout holds them in a buffer.
	"u.py": "import sys\nprint('a')\nf = open(1, 'wb', buffering=0, closefd=False)\nf.write(b'b\\n')\nprint('c', end='')\nprint('d', file=sys.stderr)\n",
	"warn.py": "import warnings\n" +
		"def f():\n    warnings.warn('first')\n    warnings.warn('second', DeprecationWarning)\n    warnings.warn('third', ResourceWarning)\n" +
		"for i in range(2):\n    try:\n        f()\n    except Warning as e:\n        print('raised', type(e).__name__, e)\n",
	"leak.py":  "f = open(__file__)\nprint(len(f.read()) > 0)\n",
	"leak2.py": "f = open(__file__)\ng = open(__file__)\nprint('two')\n",
	"opt.py": "def f():\n    'the docstring'\nprint(__debug__, f.__doc__)\n" +
		"try:\n    assert False, 'asserted'\nexcept AssertionError as e:\n    print(e)\n",
	"b.py": "import sys\nprint(sys.flags.bytes_warning)\ntry:\n    print(str(b'x'), b'x' == 'x')\nexcept BytesWarning as e:\n    print('raised', e)\n",
	// Python puts none of them first on sys.path under -I.
	"sub/paths.py": "import os, sys\nhere = os.path.dirname(os.path.realpath(__file__))\nprint(here in sys.path, os.getcwd() in sys.path, '' in sys.path)\n",
	"sib.py":       "x = 1\n",
	"usesib.py": "import os, shutil\npyc = os.path.join(os.path.dirname(os.path.abspath(__file__)), '__pycache__')\n" +
		"shutil.rmtree(pyc, ignore_errors=True)\nimport sib\nprint('wrote bytecode', os.path.exists(pyc))\n",
	"cwdmod.py":   "print('ran from the cwd')\n",
	"data.json":   `{"b": [1, 2], "a": null}`,
	"extra/pp.py": "",
}

// python3's interpreter options before FILE, -c or -m act as under python3:
// stdout, stderr and the exit code byte for byte, each option alone, the
// short ones combined (-uB), -W and -X with their values attached or not.
func TestRunPythonOptionsAsPython(t *testing.T) {
	dir := t.TempDir()
	for name, src := range pyoptsScripts {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	uCode := pyoptsScripts["u.py"]
	paths := "import os, sys; print(os.getcwd() in sys.path, '' in sys.path)"
	cases := []struct {
		name string
		args []string // after run and python3 alike
		env  []string
	}{
		{"-u keeps a write beside stdout in its place", []string{"-u", "u.py"}, nil},
		{"without -u stdout is held as python3's", []string{"u.py"}, nil},
		{"-u with -c", []string{"-u", "-c", uCode}, nil},
		{"-W error", []string{"-W", "error", "warn.py"}, nil},
		{"-Werror", []string{"-Werror", "warn.py"}, nil},
		{"-W ignore", []string{"-W", "ignore", "warn.py"}, nil},
		{"-W once::UserWarning", []string{"-W", "once::UserWarning", "warn.py"}, nil},
		{"-W error::DeprecationWarning", []string{"-W", "error::DeprecationWarning", "warn.py"}, nil},
		{"the later -W wins", []string{"-W", "ignore", "-W", "error::UserWarning", "warn.py"}, nil},
		{"-X dev shows an unclosed file at exit as python3", []string{"-X", "dev", "leak2.py"}, nil},
		{"-X dev -W error: the unclosed file's warning raises", []string{"-X", "dev", "-W", "error", "leak.py"}, nil},
		{"-W default shows an unclosed file at exit", []string{"-W", "default", "leak.py"}, nil},
		{"-Xdev", []string{"-Xdev", "-c", "import sys; print(sys.flags.dev_mode, sys.warnoptions)"}, nil},
		{"-X utf8", []string{"-X", "utf8", "-c", "import sys, locale; print(sys.flags.utf8_mode, locale.getpreferredencoding(False))"}, nil},
		{"-X int_max_str_digits", []string{"-X", "int_max_str_digits=640", "-c", "try:\n    str(10**700)\nexcept ValueError as e:\n    print(e)"}, nil},
		{"-X frozen_modules=off with -m", []string{"-X", "frozen_modules=off", "-m", "json.tool", "data.json"}, nil},
		{"-X faulthandler", []string{"-X", "faulthandler", "-c", "import faulthandler; print(faulthandler.is_enabled())"}, nil},
		{"-X tracemalloc=5", []string{"-X", "tracemalloc=5", "-c", "import tracemalloc; print(tracemalloc.is_tracing(), tracemalloc.get_traceback_limit())"}, nil},
		{"-O", []string{"-O", "opt.py"}, nil},
		{"-OO", []string{"-OO", "opt.py"}, nil},
		{"-O -O", []string{"-O", "-O", "opt.py"}, nil},
		{"-OO with -c", []string{"-OO", "-c", "def f():\n    'doc'\nprint(__debug__, f.__doc__)"}, nil},
		{"-b", []string{"-b", "b.py"}, nil},
		{"-bb", []string{"-bb", "b.py"}, nil},
		{"-E", []string{"-E", "-c", "import sys; print(sys.flags.ignore_environment, any(p.endswith('extra') for p in sys.path))"},
			[]string{"PYTHONPATH=" + filepath.Join(dir, "extra")}},
		{"-s", []string{"-s", "-c", "import site, sys; print(sys.flags.no_user_site, site.ENABLE_USER_SITE)"}, nil},
		{"-S", []string{"-S", "-c", "import sys; print(sys.flags.no_site, 'site' in sys.modules, 'exit' in dir(__builtins__))"}, nil},
		{"-I FILE: not its directory on sys.path", []string{"-I", "sub/paths.py"}, nil},
		{"-I -c: not the cwd", []string{"-I", "-c", paths}, nil},
		{"-I -m: not the cwd", []string{"-I", "-m", "cwdmod"}, nil},
		{"-q", []string{"-q", "-c", "import sys; print(sys.flags.quiet)"}, nil},
		{"-B", []string{"-B", "usesib.py"}, nil},
		{"without -B", []string{"usesib.py"}, nil},
		{"-uB", []string{"-uB", "u.py"}, nil},
		{"-Bu with -c", []string{"-Bu", "-c", uCode}, nil},
		{"-uW ARG", []string{"-uW", "error", "warn.py"}, nil},
		{"-uWerror", []string{"-uWerror", "warn.py"}, nil},
		{"-bbO", []string{"-bbO", "b.py"}, nil},
		{"-um MODULE", []string{"-um", "json.tool", "data.json"}, nil},
		{"-OO -m MODULE", []string{"-OO", "-m", "json.tool", "--sort-keys", "data.json"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// As set here for every process: python3 would be unbuffered
			// and write no bytecode without the options.
			env := append([]string{"PYTHONUNBUFFERED=", "PYTHONDONTWRITEBYTECODE=", "PYTHONWARNINGS="}, c.env...)
			sameAsPythonIn(t, dir, env, c.args, c.args)
		})
	}
}

// The options are refused where they cannot reach a fresh interpreter
// started with them, saying why and what to do; python3's -P is not one
// (run's -P is a parameter), and the refusal of a -P value says so.
func TestRunPythonOptionsRefused(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"--session", []string{"--session", "s", "-u", "-W", "error", "-c", "1"},
			"python3's options (-u -W error) are not available with --session: they apply to a fresh interpreter"},
		{"the gateway backend", []string{"--backend", "gateway", "-X", "dev", "-c", "1"},
			"python3's options (-X dev) are not available with the gateway backend: a kernel's interpreter runs as its kernelspec says; use --backend runner"},
		{"python3's -P", []string{"-P", "x.py"}, "python3's -P, safe path, is not available"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, stderr, code := runEvalhost(t, "", append([]string{"run"}, c.args...)...)
			if code != 2 || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stderr %q; want 2 and %q", code, stderr, c.want)
			}
		})
	}
}

// -OO strips the docstrings of the cells' code, not the runner's: its
// bytecode cache, shared by every start, keeps them for the next run.
func TestRunOptimizedLeavesTheRunnerWhole(t *testing.T) {
	home := t.TempDir()
	run := func(args ...string) string {
		cmd := command(t, append([]string{"run"}, args...)...)
		cmd.Env = append(cmd.Env, "EVALHOST_HOME="+home)
		out, errOut, code := runCaptured(t, cmd, false)
		if code != 0 {
			t.Fatalf("run %q: exit %d\n%s", args, code, errOut)
		}
		return out
	}
	if out := run("-OO", "-c", "def f():\n    'doc'\nprint(f.__doc__, display.__doc__ is None)"); out != "None False\n" {
		t.Errorf("under -OO: %q, want the cell's docstring gone and the runner's kept", out)
	}
	if out := run("-c", "print(display.__doc__ is None)"); out != "False\n" {
		t.Errorf("after an -OO run: %q, want the runner's docstrings", out)
	}
}
