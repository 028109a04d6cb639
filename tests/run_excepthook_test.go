package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// A script's uncaught error is reported as python3 reports it: through the
// sys.excepthook it set, to the sys.stderr it set, with its
// sys.tracebacklimit; stdout, stderr, the exit code and a replaced
// stderr's file are python3's byte for byte.
func TestRunExcepthookAsPython(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string { return writeScript(t, dir, name, src) }
	const fail = "def f():\n    g()\ndef g():\n    raise ValueError('x')\nf()\n"
	rows := []struct {
		name string
		src  string
	}{
		{name: "a custom excepthook", src: "import sys\ndef hook(t, v, tb):\n    print('HOOK', t.__name__, v, tb.tb_frame.f_code.co_name, file=sys.stderr)\n" +
			"    print('out of the hook')\nsys.excepthook = hook\nprint('before')\n" + fail},
		{name: "a hook that prints the traceback", src: "import sys, traceback\ndef hook(*a):\n    traceback.print_exception(*a)\nsys.excepthook = hook\n" + fail},
		{name: "a hook that raises", src: "import sys\ndef hook(t, v, tb):\n    print('in hook')\n    raise RuntimeError('hook broke')\nsys.excepthook = hook\n" + fail},
		{name: "a hook that raises under a tracebacklimit", src: "import sys\nsys.tracebacklimit = 1\ndef hook(t, v, tb):\n    {}['k']\nsys.excepthook = hook\n" + fail},
		{name: "a hook that calls sys.exit", src: "import sys\ndef hook(*a):\n    print('bye', file=sys.stderr)\n    sys.exit(4)\nsys.excepthook = hook\n" + fail},
		{name: "a hook of None", src: "import sys\nsys.excepthook = None\n" + fail},
		{name: "no hook", src: "import sys\ndel sys.excepthook\n" + fail},
		{name: "no hook, no default either", src: "import sys\ndel sys.excepthook, sys.__excepthook__\n" + fail},
		{name: "the default hook put back", src: "import sys\nsys.excepthook = lambda *a: None\nsys.excepthook = sys.__excepthook__\n" + fail},
		{name: "sys.stderr None", src: "import sys\nsys.stderr = None\n" + fail},
		{name: "tracebacklimit 0", src: "import sys\nsys.tracebacklimit = 0\n" + fail},
		{name: "tracebacklimit 1", src: "import sys\nsys.tracebacklimit = 1\n" + fail},
		{name: "tracebacklimit 2", src: "import sys\nsys.tracebacklimit = 2\n" + fail},
		{name: "tracebacklimit -1", src: "import sys\nsys.tracebacklimit = -1\n" + fail},
		{name: "tracebacklimit on a chain", src: "import sys\nsys.tracebacklimit = 1\ndef h():\n    try:\n        f()\n    except ValueError as e:\n        raise KeyError('k') from e\n" +
			"def f():\n    g()\ndef g():\n    raise ValueError('x')\nh()\n"},
		{name: "stdout closed, then stderr written, then an error", src: "import sys\nprint('a')\nsys.stdout.close()\nsys.stderr.write('to err\\n')\n" + fail},
	}
	for i, r := range rows {
		script := write("s"+strconv.Itoa(i)+".py", r.src)
		t.Run(r.name, func(t *testing.T) {
			cmd := command(t, "run", script)
			sameAsPythonCmd(t, cmd, pythonCmd(t, script))
		})
	}

	// A replaced sys.stderr gets the traceback, as python3's default hook
	// writes it there; nothing shows on the terminal.
	t.Run("sys.stderr replaced by a file", func(t *testing.T) {
		script := write("file.py", "import sys\nprint('out')\nsys.stderr = open(sys.argv[1], 'w')\nsys.tracebacklimit = 2\n"+fail)
		runLog, pyLog := filepath.Join(dir, "run.log"), filepath.Join(dir, "py.log")
		sameAsPythonCmd(t, command(t, "run", script, runLog), pythonCmd(t, script, pyLog))
		got, err := os.ReadFile(runLog)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(pyLog)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) || len(want) == 0 {
			t.Errorf("the replaced stderr got %q, python3's %q", got, want)
		}
	})

	// The background process's runner reports so too.
	t.Run("--session", func(t *testing.T) {
		script := write("session.py", rows[0].src)
		h := newDaemonHome(t)
		sameAsPythonCmd(t, h.cmd("run", "--session", "hook", script), pythonCmd(t, script))
	})
}

// A script that deletes sys.stderr or sys.stdout (or sets them to None)
// runs on and ends as python3's: silently, with its status. An error
// raised after sys.stderr went is reported as python3's printer reports
// it then, its object dump and "lost sys.stderr" on fd 2 (addresses and
// the reference count are each process's own), not the runner's error
// of a missing sys.stderr.
func TestRunWithoutSysStdioAsPython(t *testing.T) {
	dir := t.TempDir()
	rows := []struct{ name, src string }{
		{"del sys.stderr", "import sys\ndel sys.stderr\n"},
		{"del sys.stderr, then print", "import sys\ndel sys.stderr\nprint('out')\n"},
		{"del sys.stderr, then an error", "import sys\nprint('a')\ndel sys.stderr\nraise ValueError('x')\n"},
		{"del sys.stderr, then sys.exit(text)", "import sys\ndel sys.stderr\nsys.exit('bye')\n"},
		{"del sys.stderr, then a warning", "import sys, warnings\ndel sys.stderr\nwarnings.warn('w')\n"},
		{"sys.stderr None", "import sys\nsys.stderr = None\nprint('out')\n"},
		{"sys.stderr None, then an error", "import sys\nsys.stderr = None\n1/0\n"},
		{"del sys.stdout", "import sys\ndel sys.stdout\n"},
		{"del sys.stdout, then print", "import sys\ndel sys.stdout\nprint(1)\n"},
		{"sys.stdout None, then print", "import sys\nsys.stdout = None\nprint(1)\n"},
		{"del both", "import sys\ndel sys.stdout, sys.stderr\n"},
	}
	for i, r := range rows {
		script := writeScript(t, dir, "s"+strconv.Itoa(i)+".py", r.src)
		t.Run(r.name, func(t *testing.T) {
			out, errOut, code := runCaptured(t, command(t, "run", script), false)
			pyOut, pyErr, pyCode := runCaptured(t, pythonCmd(t, script), false)
			sameOutput(t, out, objectDumped(errOut), code, pyOut, objectDumped(pyErr), pyCode)
		})
	}
	t.Run("--session", func(t *testing.T) {
		script := writeScript(t, dir, "session.py", rows[2].src)
		out, errOut, code := runCaptured(t, newDaemonHome(t).cmd("run", "--session", "stdio", script), false)
		pyOut, pyErr, pyCode := runCaptured(t, pythonCmd(t, script), false)
		sameOutput(t, out, objectDumped(errOut), code, pyOut, objectDumped(pyErr), pyCode)
	})
}

// dumpedAt is what of the interpreter's object dump differs between two
// processes: the object's and its type's address, and its reference count.
var dumpedAt = regexp.MustCompile(`(?m)^(object (?:address  |type     |refcount ): ).*$`)

// objectDumped is stderr with dumpedAt's values taken out.
func objectDumped(stderr string) string { return dumpedAt.ReplaceAllString(stderr, "${1}N") }
