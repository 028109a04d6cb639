package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// python runs python3 with args and returns what it printed, apart or
// together (combined: one pipe for both), and its exit code.
func python(t *testing.T, combined bool, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command("python3", args...)
	cmd.Dir = t.TempDir()
	return runCaptured(t, cmd, combined)
}

// What the interpreter prints as a one-shot run ends (atexit handlers,
// finalizers, a non-daemon thread's last lines) reaches the run's stdout
// and stderr after the last cell's output, byte for byte as `python3 -c`
// prints it, and the exit code is python's.
func TestRunPrintsAtExit(t *testing.T) {
	cases := []struct {
		name string
		code string
	}{
		{"atexit to stdout", "import atexit\nprint('main')\n@atexit.register\ndef bye():\n    print('bye')"},
		{"atexit to stderr", "import atexit, sys\nprint('main')\n@atexit.register\ndef bye():\n    print('bye', file=sys.stderr)"},
		{"atexit without newline or flush", "import atexit, sys\n@atexit.register\ndef bye():\n    sys.stdout.write('no newline')"},
		{"finalizer at exit", "class A:\n    def __del__(self):\n        print('deleted')\na = A()\nprint('made')"},
		// The namespace is cleared in the interpreter's order, name by name:
		// helper is still there when a goes.
		{"finalizer at exit uses a later global", "class A:\n    def __del__(self):\n        print(helper())\na = A()\ndef helper():\n    return 'helper'"},
		{"non-daemon thread prints after the cell", "import threading, time\ndef later():\n    time.sleep(0.3)\n    print('thread done')\nthreading.Thread(target=later).start()\nprint('main done')"},
		{"atexit calls sys.exit", "import atexit, sys\nprint('main')\n@atexit.register\ndef bye():\n    print('bye')\n    sys.exit(3)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := runEvalhost(t, "", "run", "-c", c.code)
			pyOut, pyErr, pyCode := python(t, false, "-c", c.code)
			if out != pyOut {
				t.Errorf("stdout %q, python3 -c printed %q", out, pyOut)
			}
			if code != pyCode {
				t.Errorf("exit code %d, python3 -c's %d; stderr:\n%s", code, pyCode, errOut)
			}
			// Tracebacks name the cell, not "<string>": compare their last lines.
			if (pyErr == "") != (errOut == "") || !strings.HasSuffix(errOut, lastLine(pyErr)) {
				t.Errorf("stderr %q does not end as python3 -c's %q", errOut, pyErr)
			}
		})
	}
}

// An interpreter killed by a signal N after its last cell (a finalizer's)
// kills run by N too, silently, as python3 dies (--json says how;
// os._exit there is python3's exit:
// TestRunInterpreterExitIsPythons); a cell error without a traceback (a shell
// cell's exit status) is shown as its name and value, not a blank line.
func TestRunReportsHowItEnded(t *testing.T) {
	dir := t.TempDir()
	sh := filepath.Join(dir, "sh.py")
	if err := os.WriteFile(sh, []byte("# %% [sh]\necho before\nfalse\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string // a line of stderr; with --json, of stdout, where stderr is empty
		code int
	}{
		{"a signal at exit", []string{"--json", "-c", "import atexit, os, signal\natexit.register(lambda: os.kill(os.getpid(), signal.SIGKILL))"},
			`"ename":"InterpreterExit","evalue":"the interpreter was killed by signal 9 (killed) as it ended`, 137},
		{"a shell cell's exit status", []string{sh}, "ExitStatus: exit status 1", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := runEvalhost(t, "", append([]string{"run"}, c.args...)...)
			said := strings.Contains(errOut, "\n"+c.want) || strings.HasPrefix(errOut, c.want)
			if c.args[0] == "--json" {
				said = strings.Contains(out, c.want) && errOut == ""
			}
			if code != c.code || !said {
				t.Errorf("exit code %d, stdout:\n%s\nstderr:\n%s\nwant %d and %q", code, out, errOut, c.code, c.want)
			}
		})
	}
}

func lastLine(s string) string {
	if s == "" {
		return ""
	}
	s = strings.TrimSuffix(s, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:] + "\n"
}

// Exit-time output comes after every cell's output, stdout and stderr in
// the order written (as `python3 -u` shows them on one pipe).
func TestRunAtExitOrder(t *testing.T) {
	cells := []string{"import atexit, sys\nprint('cell 1')",
		"@atexit.register\ndef bye():\n    print('exit out')\n    print('exit err', file=sys.stderr)\n    print('exit out again')",
		"print('cell 3'); print('cell 3 err', file=sys.stderr)"}
	cmd := command(t, "run", "-c", cells[0], "-c", cells[1], "-c", cells[2])
	var both bytes.Buffer
	cmd.Stdout, cmd.Stderr = &both, &both
	if err := cmd.Run(); err != nil {
		t.Fatalf("evalhost run: %v\n%s", err, both.String())
	}
	want, _, _ := python(t, true, "-u", "-c", strings.Join(cells, "\n"))
	if both.String() != want {
		t.Errorf("output\n%q\nwant (python3 -u)\n%q", both.String(), want)
	}
}

// With --json, exit-time output is the last cell's: stdout and stderr
// frames tagged with its index, before its done frame.
func TestRunJSONAtExit(t *testing.T) {
	out, errOut, code := runEvalhost(t, "", "run", "--json", "-c", "x = 1",
		"-c", "import atexit\n@atexit.register\ndef bye():\n    print('bye')")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var seen []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var m struct {
			Type string
			Cell *int
			Data string
		}
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		s := m.Type
		if m.Cell != nil && m.Type != "ready" {
			s += "@" + string(rune('0'+*m.Cell))
		}
		if m.Data != "" {
			s += "=" + m.Data
		}
		seen = append(seen, s)
	}
	got := strings.Join(seen, ",")
	want := "ready,started@0,done@0,cell_end@0,started@1,stdout@1=bye\n,done@1,cell_end@1,end"
	if got != want {
		t.Errorf("lines\n got %q\nwant %q", got, want)
	}
}

// An interpreter kept in the background process (--session) does not exit
// after the run, so its atexit handlers run when the session ends, where
// no run shows them: the run itself is unaffected.
func TestRunSessionAtExitRuns(t *testing.T) {
	h := newDaemonHome(t)
	cmd := h.cmd("run", "--session", "atexit", "-c", "import atexit\nprint('main')\n@atexit.register\ndef bye():\n    print('bye')")
	out, err := cmd.Output()
	if err != nil || string(out) != "main\n" {
		t.Errorf("stdout %q, err %v; want main (and no bye: the interpreter lives on)", out, err)
	}
	kill := h.cmd("kill", "atexit")
	if b, err := kill.CombinedOutput(); err != nil {
		t.Errorf("kill: %v\n%s", err, b)
	}
}

// A one-shot run waits for its interpreter's exit within the last cell's
// --timeout, as `python3 -c` waits for non-daemon threads; then the
// interpreter gets SIGINT, which ends that wait as Ctrl-C would; one that
// stays on gets --grace, is stopped, and the run says so. Either way the run
// exits as a timeout.
func TestRunAtExitTimeout(t *testing.T) {
	cases := []struct {
		name, code, want string
	}{
		{"a thread's wait is interrupted",
			"import threading, time\ndef f():\n    print('thread', flush=True)\n    time.sleep(600)\nthreading.Thread(target=f).start()",
			"KeyboardInterrupt"},
		// The host's SIGINT ended it: no InterpreterExit (checked below).
		{"an exit that dies of the SIGINT",
			"import atexit, signal, time\n@atexit.register\ndef f():\n    signal.signal(signal.SIGINT, signal.SIG_DFL)\n    print('thread', flush=True)\n    time.sleep(600)",
			"timed out"},
		{"an exit that ignores SIGINT is stopped",
			"import atexit, signal, time\n@atexit.register\ndef f():\n    signal.signal(signal.SIGINT, signal.SIG_IGN)\n    print('thread', flush=True)\n    time.sleep(600)",
			"the interpreter was still running"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, errOut, code := runEvalhost(t, "", "run", "--timeout", "1", "--grace", "200ms", "-c", c.code)
			if code != 124 {
				t.Errorf("exit %d, want 124 (timeout); stderr:\n%s", code, errOut)
			}
			if out != "thread\n" {
				t.Errorf("stdout %q, want the thread's line", out)
			}
			for _, want := range []string{c.want, "Command timed out after 1 seconds"} {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr lacks %q:\n%s", want, errOut)
				}
			}
			if strings.Contains(errOut, "InterpreterExit") {
				t.Errorf("the host's own signal reported as the interpreter's exit:\n%s", errOut)
			}
		})
	}
}

// Python reports an error that ends an atexit handler itself ("Exception
// ignored in atexit callback"); its traceback shows the cell's frames, not
// the runner's, as a cell's traceback does. display with a bad argument
// fails inside the runner's own code every time; a KeyboardInterrupt at the
// exit lands there when the handler is writing.
func TestRunAtExitTracebackHidesRunner(t *testing.T) {
	code := "import atexit\n@atexit.register\ndef bye():\n    display(1, metadata=5)"
	out, errOut, exit := runEvalhost(t, "", "run", "-c", code)
	if exit != 0 || out != "" {
		t.Errorf("exit %d, stdout %q; want 0 and nothing, as python3 for an atexit error", exit, out)
	}
	for _, want := range []string{"Exception ignored in atexit callback", "File \"<string>\", line 4, in bye", "TypeError"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, ".py\"") {
		t.Errorf("stderr shows the runner's files:\n%s", errOut)
	}
}

// An interpreter whose last cell was skipped after a failure still exits as
// python3 does after an uncaught error: its atexit handlers' output is shown
// (after the failed cell's; with --json, tagged with it, before the end line).
func TestRunAtExitAfterAFailure(t *testing.T) {
	cells := []string{"import atexit\n@atexit.register\ndef bye():\n    print('bye')", "1/0", "print('never')"}
	out, errOut, code := runEvalhost(t, "", "run", "-c", cells[0], "-c", cells[1], "-c", cells[2])
	pyOut, _, pyCode := python(t, false, "-c", cells[0]+"\n"+cells[1]+"\n"+cells[2])
	if out != pyOut || code != pyCode {
		t.Errorf("stdout %q, exit %d; python3 -c: %q, %d; stderr:\n%s", out, code, pyOut, pyCode, errOut)
	}
	js, _, _ := runEvalhost(t, "", "run", "--json", "-c", cells[0], "-c", cells[1], "-c", cells[2])
	lines := strings.Split(strings.TrimSpace(js), "\n")
	if n := len(lines); n < 2 || lines[n-2] != `{"cell":1,"type":"stdout","data":"bye\n"}` {
		t.Errorf("--json: the line before the end is not the exit's output of cell 1:\n%s", js)
	}
}
