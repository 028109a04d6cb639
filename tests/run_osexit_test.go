package tests

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A script that ends its interpreter itself during a cell, by os._exit(N)
// or a C library's exit(N), makes run exit N and print nothing of its own,
// as python3 does; the output before it is kept, later cells do not run.
// A C exit runs C's atexit (stdio is flushed), not Python's.
func TestRunInterpreterExitIsPythons(t *testing.T) {
	cases := []asPython{
		{"os._exit(3)", []string{"-c", "import os; print('a', flush=True); os._exit(3)"}, nil},
		{"os._exit(0)", []string{"-c", "import os; print('a', flush=True); os._exit(0)"}, nil},
		{"os._exit(256) is 0", []string{"-c", "import os; os._exit(256)"}, nil},
		// run flushes a cell's output at its end, as python3 -u as it prints.
		{"os._exit in a second cell keeps the first's output",
			[]string{"-c", "import sys; print('one'); print('err one', file=sys.stderr)", "-c", "import os; print('two', flush=True); os._exit(5)", "-c", "print('three')"},
			[]string{"-u", "-c", "import sys; print('one'); print('err one', file=sys.stderr)\nimport os; print('two', flush=True); os._exit(5)\nprint('three')"}},
		{"--keep-going stops at it",
			[]string{"--keep-going", "-c", "import os; os._exit(3)", "-c", "print('after')"},
			[]string{"-c", "import os; os._exit(3)\nprint('after')"}},
		{"a C exit(4), C's stdio flushed, Python's atexit not run",
			[]string{"-c", "import atexit, ctypes\natexit.register(print, 'bye')\nlibc = ctypes.CDLL(None)\nprint('a', flush=True)\nlibc.printf(b'c buffered\\n')\nlibc.exit(4)"}, nil},
		// At the interpreter's end python3 exits with it too, and prints
		// nothing of it; sys.exit's status gives way to it, as there.
		// run flushes the cell's output at its end, as python3 -u.
		{"os._exit(7) in an atexit handler", []string{"-c", "import atexit, os\natexit.register(lambda: os._exit(7))\nprint('main')"},
			[]string{"-u", "-c", "import atexit, os\natexit.register(lambda: os._exit(7))\nprint('main')"}},
		{"os._exit(5) in an atexit handler after sys.exit(2)", []string{"-c", "import atexit, os, sys\natexit.register(os._exit, 5)\nsys.exit(2)"}, nil},
		// A failure skipped the last cell: the exit after it is the script's too.
		{"os._exit(7) in an atexit handler after a failed cell",
			[]string{"-c", "import atexit, os; atexit.register(os._exit, 7); 1/0", "-c", "print('not run')"},
			[]string{"-c", "import atexit, os; atexit.register(os._exit, 7); 1/0\nprint('not run')"}},
		{"os._exit(6) in a thread after the last cell", []string{"-c", "import threading, os, time\nthreading.Thread(target=lambda: (time.sleep(0.2), os._exit(6))).start()"}, nil},
		{"--max-output shows no notice", []string{"--max-output", "1000", "-c", "import os; print('a', flush=True); os._exit(3)"},
			[]string{"-c", "import os; print('a', flush=True); os._exit(3)"}},
	}
	sameAsPythonRows(t, cases)
}

// --json keeps saying what happened to the interpreter: the cell was
// killed, how, and the status run exits with.
func TestRunJSONSaysTheInterpreterExited(t *testing.T) {
	out, errOut, code := runEvalhost(t, "", "run", "--json", "-c", "import os; os._exit(3)", "-c", "print('later')")
	if code != 3 {
		t.Errorf("exit code %d, want 3; stderr:\n%s", code, errOut)
	}
	var ends []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if m["type"] == "cell_end" {
			ends = append(ends, m)
		}
	}
	if len(ends) != 2 || ends[0]["status"] != "killed" || ends[0]["exitStatus"] != 3.0 ||
		!strings.Contains(ends[0]["message"].(string), "interpreter died: exit code 3") || ends[1]["status"] != "skipped" {
		t.Errorf("cell ends %v; want cell 1 killed, exitStatus 3, saying how, and cell 2 skipped", ends)
	}
}

// An interpreter killed by a signal N is no script's exit: run dies of N
// too, silently, as python3 dies (a shell says "Killed" and 128+N;
// README), and --json says how.
func TestRunSignalDeathIsReported(t *testing.T) {
	const code = "import os, signal; print('a', flush=True); os.kill(os.getpid(), signal.SIGKILL)"
	out, errOut, status := runEvalhost(t, "", "run", "-c", code)
	if out != "a\n" || status != 137 || errOut != "" {
		t.Errorf("stdout %q, status %d, stderr:\n%s\nwant a, 137 and nothing more", out, status, errOut)
	}
	out, _, status = runEvalhost(t, "", "run", "--json", "-c", code)
	if status != 137 || !strings.Contains(out, "interpreter died: signal: killed; not retried") {
		t.Errorf("--json: status %d, stdout:\n%s\nwant 137 and the death said", status, out)
	}
}

// A thread of the script that ends the interpreter by os._exit(N) while no
// cell runs (here while a shell cell waits for it: python3 would be at a
// later statement) makes run exit N, silently, as python3 exits; the
// later cells do not run. It exited 1, saying the interpreter had ended
// before the next cell. The thread waits for the file go, which the shell
// cell makes (python3's script makes it where that cell stands), so it
// exits between the cells, never during the first.
func TestRunOsExitBetweenCellsAsPython(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	const thread = "import os, threading, time\ndef f():\n    while not os.path.exists('go'):\n        time.sleep(0.01)\n    os._exit(%d)\n" +
		"threading.Thread(target=f, daemon=%s).start()\nprint('started', flush=True)\n"
	for _, tc := range []struct {
		name   string
		status int
		daemon string
	}{
		{"os._exit(7)", 7, "False"},
		{"os._exit(0)", 0, "False"},
		{"os._exit(5) in a daemon thread", 5, "True"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			head := fmt.Sprintf(thread, tc.status, tc.daemon)
			dir, pyDir := t.TempDir(), t.TempDir()
			script := writeScript(t, dir, "between.py", "# %%\n"+head+"_ = open('pid', 'w').write(str(os.getpid()))\n"+
				"# %% [sh]\ntouch go; while kill -0 $(cat pid) 2>/dev/null; do sleep 0.01; done\n"+
				"# %%\nprint('after')\n")
			pyScript := writeScript(t, pyDir, "between.py", head+"open('go', 'w').close()\ntime.sleep(60)\nprint('after')\n")
			cmd := command(t, "run", script)
			cmd.Dir = dir
			pyCmd := pythonCmd(t, pyScript)
			pyCmd.Dir = filepath.Dir(pyScript)
			sameAsPythonCmd(t, cmd, pyCmd)
		})
	}
}
