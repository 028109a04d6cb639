package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A script that ends itself by sys.exit(N) or raise SystemExit exits as
// python3 does: its status, no traceback, the message of sys.exit("text")
// on stderr, and no later cell runs; argparse's usage error is the common
// case (status 2 and its usage lines).
func TestRunExitsAsPython(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "cli.py")
	src := "import argparse\np = argparse.ArgumentParser(prog='cli')\np.add_argument('--n', type=int)\n" +
		"a = p.parse_args()\nprint('n', a.n)\n# %%\nprint('second cell')\n"
	if err := os.WriteFile(script, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	failing := filepath.Join(dir, "failing.py")
	if err := os.WriteFile(failing, []byte("def f(x):\n    return 1/x\nprint('before')\nf(0)\nprint('not run')\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	interrupted := filepath.Join(dir, "interrupted.py")
	if err := os.WriteFile(interrupted, []byte("print('before')\ndef f():\n    raise KeyboardInterrupt\nf()\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	named := writeScript(t, dir, "named.py", "class KeyboardInterrupt(Exception):\n    pass\nraise KeyboardInterrupt('mine')\n")
	sub := writeScript(t, dir, "sub.py", "class Stop(KeyboardInterrupt):\n    pass\nraise Stop\n")
	cells := writeScript(t, dir, "cells.py", "print('before')\n# %%\nraise KeyboardInterrupt\n# %%\nprint('after')\n")
	cases := []asPython{
		// python3 shows the traceback and dies of SIGINT: a shell's 130.
		{"KeyboardInterrupt raised", []string{interrupted}, nil},
		// Only the builtin itself: its subclass, or a class of its name,
		// ends python3 with 1, as any error does.
		{"a class named KeyboardInterrupt", []string{named}, nil},
		{"a KeyboardInterrupt subclass", []string{sub}, nil},
		// The script said stop, as Ctrl-C does: no later cell runs.
		{"--keep-going stops at a raised KeyboardInterrupt", []string{"--keep-going", cells}, []string{cells}},
		// The traceback says what failed and where; no line of evalhost's.
		{"an uncaught error", []string{failing}, nil},
		{"sys.exit(3)", []string{"-c", "import sys; print('before'); sys.exit(3)"}, nil},
		{"sys.exit(text)", []string{"-c", "import sys; sys.exit('bad input: \\xe9')"}, nil},
		{"sys.exit(256) is 0", []string{"-c", "raise SystemExit(256)"}, nil},
		{"sys.exit(-1)", []string{"-c", "import sys; sys.exit(-1)"}, nil},
		{"sys.exit(2**32+3) is cast to a C int", []string{"-c", "import sys; sys.exit(2**32+3)"}, nil},
		{"sys.exit(2**31) is cast to a C int", []string{"-c", "import sys; sys.exit(2**31)"}, nil},
		{"sys.exit(2**32) is 0", []string{"-c", "import sys; print('x'); sys.exit(2**32)\nprint('not run')"}, nil},
		{"sys.exit past a C int", []string{"-c", "import sys; sys.exit(2**70)"}, nil},
		{"SystemExit of two args", []string{"-c", "raise SystemExit(4, 'x')"}, nil},
		{"sys.exit(True)", []string{"-c", "import sys; sys.exit(True)"}, nil},
		{"sys.exit in a function", []string{"-c", "import sys\ndef main():\n    return 5\nif __name__ == '__main__':\n    sys.exit(main())"}, nil},
		{"--keep-going stops at it", []string{"--keep-going", "-c", "import sys; sys.exit(3)", "-c", "print('after')"},
			[]string{"-c", "import sys; sys.exit(3)\nprint('after')"}},
		{"a SystemExit subclass", []string{"-c", "class Done(SystemExit): pass\nraise Done(6)"}, nil},
		{"a message python3 cannot encode", []string{"-c", "import sys; sys.exit('lone \\udcff \\ud800')"}, nil},
		{"--max-output shows no traceback", []string{"--max-output", "1000", "-c", "import sys; print('out'); sys.exit('bye')"},
			[]string{"-c", "import sys; print('out'); sys.exit('bye')"}},
		{"--max-output, an atexit handler after sys.exit(text)", []string{"--max-output", "1000", "-c", "import atexit, sys; print('out'); atexit.register(print, 'at exit'); sys.exit('bye')"},
			[]string{"-c", "import atexit, sys; print('out'); atexit.register(print, 'at exit'); sys.exit('bye')"}},
		// python3 writes the message to sys.stderr, whatever the script made it.
		{"sys.exit(text) to a replaced sys.stderr", []string{"-c", "import sys; sys.stderr = sys.stdout; print('out'); sys.exit('bye')"}, nil},
		{"argparse usage error", []string{script, "--n", "x"}, nil},
		{"argparse ok", []string{script, "--n", "7"}, nil},
		{"argparse help", []string{script, "--help"}, nil},
	}
	sameAsPythonRows(t, cases)
}

// sameAsPython runs evalhost run with run's arguments and python3 with
// py's, and fails t where their stdout, exit code or stderr differ.
// asPython is a row of a table that runs `evalhost run` with run and
// python3 with py (run's arguments when py is nil) and wants the same.
type asPython struct {
	name string
	run  []string // after run
	py   []string // python3's arguments, when not run's
}

// sameAsPythonRows runs each row as a subtest (sameAsPython).
func sameAsPythonRows(t *testing.T, rows []asPython) {
	t.Helper()
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			py := r.py
			if py == nil {
				py = r.run
			}
			sameAsPython(t, r.run, py)
		})
	}
}

func sameAsPython(t *testing.T, run, py []string) {
	t.Helper()
	sameAsPythonIn(t, "", nil, run, py)
}

// sameAsPythonIn is sameAsPython with both commands in dir (else evalhost
// in the test's and python3 in a new one) and env added to both
// environments.
func sameAsPythonIn(t *testing.T, dir string, env, run, py []string) {
	t.Helper()
	cmd := command(t, append([]string{"run"}, run...)...)
	cmd.Dir, cmd.Env = dir, append(cmd.Env, env...)
	pyCmd := exec.Command("python3", py...)
	pyCmd.Dir, pyCmd.Env = dir, append(os.Environ(), env...)
	if dir == "" {
		pyCmd.Dir = t.TempDir()
	}
	sameAsPythonCmd(t, cmd, pyCmd)
}

// sameAsPythonCmd runs evalhost's cmd and python3's pyCmd as their callers
// set them up (a session's home, stdin) and fails t where their stdout,
// exit code or stderr differ.
func sameAsPythonCmd(t *testing.T, cmd, pyCmd *exec.Cmd) {
	t.Helper()
	out, errOut, code := runCaptured(t, cmd, false)
	pyOut, pyErr, pyCode := runCaptured(t, pyCmd, false)
	sameOutput(t, out, errOut, code, pyOut, pyErr, pyCode)
}

// writeScript writes src to dir/name and returns its path.
func writeScript(t *testing.T, dir, name, src string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// pythonCmd is python3 with args, in a new directory.
func pythonCmd(t *testing.T, args ...string) *exec.Cmd {
	cmd := exec.Command("python3", args...)
	cmd.Dir = t.TempDir()
	return cmd
}

func sameOutput(t *testing.T, out, errOut string, code int, pyOut, pyErr string, pyCode int) {
	t.Helper()
	if out != pyOut {
		t.Errorf("stdout %q, python3 printed %q", out, pyOut)
	}
	if code != pyCode {
		t.Errorf("exit code %d, python3's %d; stderr:\n%s", code, pyCode, errOut)
	}
	if errOut != pyErr {
		t.Errorf("stderr %q, python3's %q", errOut, pyErr)
	}
}

// nb run records a cell's sys.exit(3) as its error output, as papermill,
// and runs no later cell, --allow-errors too (papermill runs on): the
// notebook's author asked the run to stop. It exits 1 as for any failed
// cell: a notebook run's status is not the script's.
func TestNotebookRunStopsAtSysExit(t *testing.T) {
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.ipynb"), filepath.Join(dir, "out.ipynb")
	writeNotebook(t, in, "print('before')", "import sys\nsys.exit(3)", "print('after')")
	cmd := command(t, "nb", "run", in, "-o", out, "--allow-errors")
	if b, err := cmd.CombinedOutput(); cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("nb run --allow-errors: %v, want exit 1\n%s", err, b)
	}
	cells := readNotebook(t, out)
	if len(cells[1].Outputs) == 0 || cells[1].Outputs[len(cells[1].Outputs)-1].Ename != "SystemExit" {
		t.Errorf("cell 2's outputs %+v, want its SystemExit error", cells[1].Outputs)
	}
	if len(cells[2].Outputs) != 0 || cells[2].ExecutionCount != nil {
		t.Errorf("cell 3 ran after sys.exit(3): %+v", cells[2])
	}
}

// A cell's error other than an exit shows as it comes, before what the
// interpreter prints as it ends (an atexit handler's line), as python3's
// traceback does; only a python3-style exit's error is held to the cell's
// end (and then dropped).
func TestRunShowsAnErrorBeforeTheExitOutput(t *testing.T) {
	cmd := command(t, "run", "-c", "import atexit; atexit.register(print, 'bye')", "-c", "1/0")
	out, _, code := runCaptured(t, cmd, true)
	if code != 1 || !strings.Contains(out, "bye") || strings.Index(out, "ZeroDivisionError") > strings.Index(out, "bye") {
		t.Errorf("exit %d, output (stdout and stderr as one):\n%s\nwant the traceback before bye, as python3", code, out)
	}
}

// With --max-output, sys.exit(text)'s message goes to stderr, as python3
// writes it, also when the tail is too short to hold the traceback before
// which the runner wrote it: it is not lost to the elided lines. A
// replaced sys.stderr that kept it gets no copy of run's.
func TestRunBoundedExitMessage(t *testing.T) {
	long := "import sys\nprint('\\n'.join(str(i) for i in range(50)))\ndef f():\n    sys.exit('bye')\nf()\n"
	cases := []struct {
		name, code, stderr string
	}{
		{"a tail shorter than the traceback", long, "bye\n"},
		{"a message of lines", "import sys\nprint('x' * 30)\nsys.exit('a\\nb')\n", "a\nb\n"},
		{"sys.stderr replaced, a short tail", "import io, sys\nsys.stderr = io.StringIO()\n" + long, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, pyErr, pyCode := runCaptured(t, pythonCmd(t, "-c", c.code), false)
			if pyErr != c.stderr || pyCode != 1 {
				t.Fatalf("python3 wrote %q and exited %d; the case wants %q, 1", pyErr, pyCode, c.stderr)
			}
			_, errOut, code := runCaptured(t, command(t, "run", "--max-output", "40", "-c", c.code), false)
			if errOut != c.stderr || code != 1 {
				t.Errorf("stderr %q, exit %d; python3's %q, 1", errOut, code, c.stderr)
			}
		})
	}
}

// sys.exit(text)'s message is written as python3 writes it at the exit
// (handle_system_exit), from whichever cell the script ends in: str(code)
// taken once (a __str__ with a side effect runs once; a SystemExit
// subclass's own __str__ never), written to sys.stderr as the script left
// it, then a newline, which goes to fd 2 when sys.stderr cannot take it;
// a failed str() or write leaves the newline alone, and 3.12+ then report
// that error as at their threading shutdown (sys.unraisablehook); with
// sys.stderr None, 3.12+ write nothing of a message UTF-8 cannot encode,
// 3.8-3.11 its backslash escapes.
func TestRunExitMessageAsPython3WritesIt(t *testing.T) {
	dir := t.TempDir()
	// A sys.stderr whose writes show on stdout, and fail for the text given.
	writer := "import sys\nclass W:\n    def write(self, s):\n        sys.__stdout__.write('[' + s + ']')\n        if %s:\n            raise ValueError('no')\n" +
		"    def flush(self):\n        pass\nsys.stderr = W()\n"
	failsNewline, failsAll := fmt.Sprintf(writer, "s == '\\n'"), fmt.Sprintf(writer, "True")
	failingStr := "import sys\nclass C:\n    def __str__(self):\n        raise ValueError('no str')\n"
	// Where the exit's message went: a sys.stderr replaced in an earlier cell.
	kept := "import atexit, io, sys\nbuf = io.StringIO()\nsys.stderr = buf\n_ = atexit.register(lambda: print('stderr had %r' % buf.getvalue()))\n"
	cells := func(name string, src ...string) asPython {
		return asPython{name, cellArgs(src), []string{"-c", strings.Join(src, "\n")}}
	}
	n := 0
	percent := func(name string, src ...string) asPython {
		n++
		p := writeScript(t, dir, fmt.Sprintf("s%d.py", n), strings.Join(src, "\n# %%\n")+"\n")
		return asPython{name + ", a percent script", []string{p}, nil}
	}
	subclass := "import sys\nclass Done(SystemExit):\n    def __str__(self):\n        print('Done.__str__')\n        return 'done'\n"
	code := "class Code:\n    def __str__(self):\n        print('Code.__str__')\n        return 'code'\n"
	cases := []asPython{
		{"a __str__ with a side effect", []string{"-c", "import sys\nclass C:\n    def __str__(self):\n        print('str called')\n        return 'bye'\nsys.exit(C())\n"}, nil},
		{"a __str__ that fails", []string{"-c", failingStr + "sys.exit(C())\n"}, nil},
		{"a __str__ that fails, sys.stderr None", []string{"-c", failingStr + "sys.stderr = None\nsys.exit(C())\n"}, nil},
		{"a __str__ that fails, the script's unraisablehook", []string{"-c", failingStr +
			"sys.unraisablehook = lambda u: print('hook', u.exc_type.__name__, u.exc_value, u.err_msg, u.object, u.exc_traceback.tb_frame.f_code.co_name)\nsys.exit(C())\n"}, nil},
		{"a sys.stderr that fails the newline", []string{"-c", failsNewline + "sys.exit('bye')\n"}, nil},
		{"a sys.stderr that fails every write", []string{"-c", failsAll + "sys.exit('bye')\n"}, nil},
		{"sys.stderr None, a lone surrogate", []string{"-c", "import sys\nsys.stderr = None\nsys.exit('a \\udcff b')\n"}, nil},
		{"sys.stderr None, a lone surrogate, the script's unraisablehook", []string{"-c", "import sys\nsys.stderr = None\n" +
			"sys.unraisablehook = lambda u: print('hook', u.exc_type.__name__, u.err_msg, u.exc_traceback)\nsys.exit('a \\udcff b')\n"}, nil},
		// python3 never calls the exception's str(), only its code's.
		{"a SystemExit subclass's own __str__", []string{"-c", subclass + code + "raise Done(Code())\n"}, nil},
		{"a SystemExit subclass's own __str__, an int code", []string{"-c", subclass + "raise Done(4)\n"}, nil},
		{"a SystemExit subclass of a text code", []string{"-c", "class Done(SystemExit):\n    pass\nraise Done('text')\n"}, nil},
		// An earlier cell's sys.stderr is the one python3 writes to.
		cells("a cell before the last, sys.stderr replaced", kept, "sys.exit('bye')", "print('not run')"),
		percent("a cell before the last, sys.stderr replaced", kept, "sys.exit('bye')", "print('not run')"),
		cells("a cell before the last, a sys.stderr that fails every write", failsAll, "sys.exit('bye')", "print('not run')"),
		percent("a cell before the last, a __str__ that fails", failingStr, "sys.exit(C())", "print('not run')"),
		percent("a cell before the last, a SystemExit subclass's own __str__", subclass+code, "raise Done(Code())", "print('not run')"),
	}
	bounded := cells("--max-output, a cell before the last, sys.stderr replaced", kept, "sys.exit('bye')", "print('not run')")
	bounded.run = append([]string{"--max-output", "1000"}, bounded.run...)
	sameAsPythonRows(t, append(cases, bounded))
}

// cellArgs is a -c argument of run's for each cell's source.
func cellArgs(src []string) []string {
	var args []string
	for _, s := range src {
		args = append(args, "-c", s)
	}
	return args
}

// With --max-output, what the interpreter prints as it exits after a
// cell before the last ended the script (sys.exit) is shown as python3
// shows it, on its stream: an atexit handler's line, the exit's report of
// text a cell's stdout lost; it came after that cell's end, and was
// dropped with the tail no longer kept.
func TestRunBoundedExitOutputAfterAnEarlyExit(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ name, src string }{
		{"an atexit handler", "# %%\nimport atexit, sys\natexit.register(print, 'at exit', file=sys.stderr)\nsys.exit('bye')\n# %%\nprint('not run')\n"},
		{"text a cell before lost", "# %%\nimport os, sys\nsys.setswitchinterval(60) # no flusher tick between the two (TestRunUnflushableStdioExitsAsPython)\nprint(1)\nos.close(1)\n# %%\nsys.exit(3)\n# %%\nprint('not run')\n"},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			script := writeScript(t, dir, fmt.Sprintf("s%d.py", i), c.src)
			_, pyErr, pyCode := runCaptured(t, pythonCmd(t, script), false)
			_, errOut, code := runCaptured(t, command(t, "run", "--max-output", "1000", script), false)
			if errOut != pyErr || code != pyCode {
				t.Errorf("stderr %q, exit %d; python3's %q, %d", errOut, code, pyErr, pyCode)
			}
		})
	}
}
