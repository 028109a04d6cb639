package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// fdScripts close or replace descriptors they did not open, as daemonizers
// and test harnesses do; python3 survives each and goes on printing.
var fdScripts = []struct {
	name, src string
	proc      bool // lists /proc/self/fd
}{
	{name: "closerange to 1024", src: "import os, sys\nprint('before', flush=True)\nos.closerange(3, 1024)\nprint('after')\nprint('to stderr', file=sys.stderr)\n"},
	{name: "closerange to the soft limit", src: "import os, resource, sys\nos.closerange(3, resource.getrlimit(resource.RLIMIT_NOFILE)[0])\n" +
		"print('after')\nsys.stdout.flush()\nprint('to stderr', file=sys.stderr)\n"},
	{name: "closerange of everything", src: "import os\nos.closerange(3, 1 << 30)\nprint('after')\n"},
	{name: "os.close(3)", src: "import os\ntry:\n    os.close(3)\nexcept OSError as e:\n    print('close 3:', e)\nprint('after')\n"},
	{name: "each fd from 3 to 1024 closed", src: "import os, errno\nn = 0\nfor fd in range(3, 1024):\n    try:\n        os.close(fd)\n" +
		"    except OSError as e:\n        n += e.errno == errno.EBADF\nprint('EBADF', n)\n"},
	{name: "dup2 over fd 3", src: "import os\nfd = os.open(os.devnull, os.O_WRONLY)\nprint('fd', fd)\nos.dup2(fd, 3)\n" +
		"os.write(3, b'into devnull')\nos.close(3)\nprint('after')\n"},
	{name: "dup2 of a pipe over fd 3, read back", src: "import os\nr, w = os.pipe()\nprint(r, w)\nos.dup2(w, 3)\nos.write(3, b'through 3')\n" +
		"os.close(w)\nprint(os.read(r, 100))\n"},
	{name: "os.fdopen(3)", src: "import os\ntry:\n    os.fdopen(3, 'w')\nexcept OSError as e:\n    print('fdopen 3:', e)\nprint('after')\n"},
	{name: "every listed fd closed, then a file opened", proc: true, src: "import os\nerrs = set()\nfor name in os.listdir('/proc/self/fd'):\n" +
		"    if int(name) > 2:\n        try:\n            os.close(int(name))\n        except OSError as e:\n            errs.add(e.errno)\n" +
		"print('errors', sorted(errs))\nwith open(__file__) as f:\n    print('fd', f.fileno(), len(f.read()) > 0)\n"},
	{name: "every listed fd opened with os.fdopen and closed", proc: true, src: "import os\nn = 0\nfor name in os.listdir('/proc/self/fd'):\n" +
		"    if int(name) > 2:\n        try:\n            os.fdopen(int(name), 'rb').close()\n        except OSError:\n            n += 1\nprint('refused', n > 0)\n"},
	{name: "dup2 onto every fd up to 1024", src: "import os\nn = os.open(os.devnull, os.O_WRONLY)\nbad = 0\nfor fd in range(n + 1, 1024):\n" +
		"    try:\n        os.dup2(n, fd)\n    except OSError:\n        bad += 1\nprint('failed', bad)\nos.closerange(n + 1, 1024)\nprint('after')\n"},
	{name: "an uncaught error after closing", src: "import os\nos.closerange(3, 1024)\ndef f():\n    1 / 0\nprint('before')\nf()\n"},
	{name: "sys.exit after closing", src: "import os, sys\nos.closerange(3, 1024)\nprint('bye')\nsys.exit(3)\n"},
	{name: "a thread prints while fds are closed", src: "import os, threading\ndef w():\n    for i in range(300):\n        print('t', i)\n" +
		"t = threading.Thread(target=w)\nt.start()\nos.closerange(3, 1024)\nt.join()\nprint('done')\n"},
	{name: "fork after closing, the child prints", src: "import os, sys\nos.closerange(3, 1024)\nsys.stdout.flush()\npid = os.fork()\n" +
		"if pid == 0:\n    print('child')\n    sys.stdout.flush()\n    os._exit(0)\nos.waitpid(pid, 0)\nprint('parent')\n"},
	{name: "a subprocess after closing", src: "import os, subprocess, sys\nos.closerange(3, 1024)\n" +
		"subprocess.run([sys.executable, '-c', 'print(\"from the child\")'])\nprint('after')\n"},
	{name: "stdio to devnull, as a daemon", src: "import os, sys\nprint('before', flush=True)\nos.closerange(3, 1024)\n" +
		"fd = os.open(os.devnull, os.O_RDWR)\nos.dup2(fd, 0)\nos.dup2(fd, 1)\nos.dup2(fd, 2)\nprint('gone')\nprint('gone too', file=sys.stderr)\nsys.exit(5)\n"},
}

// A script that closes descriptors it did not open runs on as under
// python3: stdout, stderr and exit code byte for byte; the runner's own
// pipes are spared.
func TestRunScriptClosingFdsAsPython(t *testing.T) {
	dir := t.TempDir()
	_, procErr := os.Stat("/proc/self/fd")
	for i, c := range fdScripts {
		script := writeScript(t, dir, "fd"+strconv.Itoa(i)+".py", c.src)
		t.Run(c.name, func(t *testing.T) {
			if c.proc && procErr != nil {
				t.Skip("no /proc/self/fd")
			}
			sameAsPythonCmd(t, command(t, "run", script), pythonCmd(t, script))
		})
	}
	// fd 1 pointed at a file gets the script's bytes alone, as under
	// python3: the runner's marks go to its own copy of the host's pipe.
	t.Run("stdout pointed at a file by dup2", func(t *testing.T) {
		script := writeScript(t, dir, "redirect.py", "import os, sys\nprint('to the pipe', flush=True)\n"+
			"f = open(sys.argv[1], 'w')\nos.dup2(f.fileno(), 1)\nprint('into the file', flush=True)\nos.system('echo from a child')\n")
		runLog, pyLog := filepath.Join(dir, "run.log"), filepath.Join(dir, "py.log")
		sameAsPythonCmd(t, command(t, "run", script, runLog), pythonCmd(t, script, pyLog))
		got, err := os.ReadFile(runLog)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := os.ReadFile(pyLog); string(got) != string(want) {
			t.Errorf("the file got %q, python3's %q", got, want)
		}
	})
	t.Run("-c", func(t *testing.T) {
		code := "import os\nos.closerange(3, 1024)\nprint('after')"
		sameAsPythonCmd(t, command(t, "run", "-c", code), pythonCmd(t, "-c", code))
	})
	// The background process's runner serves the next command as well.
	t.Run("--session", func(t *testing.T) {
		h := newDaemonHome(t)
		script := writeScript(t, dir, "session.py", fdScripts[0].src)
		sameAsPythonCmd(t, h.cmd("run", "--session", "fds", script), pythonCmd(t, script))
		if out, errOut, code := h.run("run", "--session", "fds", "-c", "6 * 7"); out != "42\n" || code != 0 {
			t.Errorf("the next command: stdout %q, exit %d, want 42; stderr:\n%s", out, code, errOut)
		}
	})
}

// A script whose sys.stdout or sys.stderr cannot be written as it ends
// (it closed fd 1 with text still buffered) ends as python3's: stdout's
// "Exception ignored in: <stdout>" report and status 120 (stderr's
// silently), not 0 and a warning of run's; an uncaught KeyboardInterrupt
// still dies of SIGINT, and a descriptor put back before the end loses
// nothing.
func TestRunUnflushableStdioExitsAsPython(t *testing.T) {
	// sys.setswitchinterval(60) in a row that prints, then closes fd 1:
	// the runner's flusher (every 50 ms, for live output) could otherwise
	// take the GIL between the two and write the text python3 loses, when
	// the machine is busy. Both run the same code.
	dir := t.TempDir()
	script := writeScript(t, dir, "closes.py", "import os\nos.close(1)\nprint('lost')\n")
	// A cell before the last loses its text: the exit's report says so,
	// once, as python3's; no warning of run's at that cell's end.
	cells := writeScript(t, dir, "cells.py", "import os, sys\nsys.setswitchinterval(60)\nprint(1)\nos.close(1)\n# %%\nprint(2)\n# %%\nx = 3\n")
	cases := []asPython{
		{"a script closes fd 1, then prints", []string{script}, []string{script}},
		{"fd 1 closed in one -c cell, printed to in the next",
			[]string{"-c", "import os; os.close(1)", "-c", "print(1)"}, []string{"-c", "import os; os.close(1)\nprint(1)"}},
		{"printed, then fd 1 closed", []string{"-c", "import os, sys; sys.setswitchinterval(60); print(1); os.close(1)"}, nil},
		{"printed, then fd 1 closed in a -c cell before the last",
			[]string{"-c", "import os, sys; sys.setswitchinterval(60); print(1); os.close(1)", "-c", "x = 2"}, []string{"-c", "import os, sys; sys.setswitchinterval(60); print(1); os.close(1)\nx = 2"}},
		{"printed, then fd 1 closed in a percent script's first cell", []string{cells}, []string{cells}},
		{"stderr's text lost in a -c cell before the last",
			[]string{"-c", "import os, sys; sys.stderr.write('x'); os.close(2)", "-c", "x = 2"},
			[]string{"-c", "import os, sys; sys.stderr.write('x'); os.close(2)\nx = 2"}},
		{"stderr's text lost, silently", []string{"-c", "import os, sys; sys.stderr.write('x'); os.close(2)"}, nil},
		{"over sys.exit(3)", []string{"-c", "import os, sys; sys.setswitchinterval(60); print(1); os.close(1); sys.exit(3)"}, nil},
		// sys.exit's message comes first, as python3 prints it before its exit.
		{"over sys.exit(text)", []string{"-c", "import os, sys; sys.setswitchinterval(60); print(1); os.close(1); sys.exit('bye')"}, nil},
		{"after an uncaught error", []string{"-c", "import os, sys; sys.setswitchinterval(60); print(1); os.close(1); 1/0"}, nil},
		{"a raised KeyboardInterrupt dies of SIGINT", []string{"-c", "import os, sys; sys.setswitchinterval(60); print(1); os.close(1); raise KeyboardInterrupt"}, nil},
		{"the script's own unraisablehook reports it",
			[]string{"-c", "import os, sys; sys.setswitchinterval(60); print(1); os.close(1); sys.unraisablehook = lambda u: os.write(2, b'hook %r\\n' % u.object)"}, nil},
		{"a replaced sys.stdout is flushed instead", []string{"-c", "import io, os, sys; sys.setswitchinterval(60); print(1); os.close(1); sys.stdout = io.StringIO()"}, nil},
		{"fd 1 put back by an atexit handler",
			[]string{"-c", "import atexit, os, sys; sys.setswitchinterval(60); print(1); fd = os.dup(1); os.close(1); atexit.register(os.dup2, fd, 1);"}, nil},
	}
	sameAsPythonRows(t, cases)
	// A failure before the last cell: the exit that follows it is the
	// script's, and its report the one word of the lost text.
	t.Run("a cell fails before the last", func(t *testing.T) {
		sameAsPython(t, []string{"-c", "import os, sys; sys.setswitchinterval(60); print(1); os.close(1); 1/0", "-c", "print('not run')"},
			[]string{"-c", "import os, sys; sys.setswitchinterval(60); print(1); os.close(1); 1/0\nprint('not run')"})
	})
}

// A script may delete sys.stdout or sys.stderr: python3 runs on, and its
// exit passes over a stream that is missing (its text still buffered in
// sys.__stdout__ comes out), where the runner's own flushes failed on it
// and its internal traceback ended the run. Here -c cells, text left
// buffered and a cell before the last; TestRunWithoutSysStdioAsPython
// has a FILE's cases (errors and warnings after the del, None, --session).
func TestRunCellsWithoutSysStdStreams(t *testing.T) {
	cases := []asPython{
		{"text buffered, del sys.stdout", []string{"-c", "import sys; print('a', end=''); del sys.stdout"}, nil},
		{"text buffered, del sys.stderr", []string{"-c", "import sys; sys.stderr.write('e'); del sys.stderr"}, nil},
		{"sys.exit(text) without either", []string{"-c", "import sys; del sys.stdout, sys.stderr; sys.exit('bye')"}, nil},
		{"sys.exit(3) without sys.stdout", []string{"-c", "import sys; del sys.stdout; sys.exit(3)"}, nil},
		{"del sys.stderr in a cell before the last",
			[]string{"-c", "import sys; del sys.stderr", "-c", "print(1)"}, []string{"-c", "import sys; del sys.stderr\nprint(1)"}},
	}
	sameAsPythonRows(t, cases)
}
