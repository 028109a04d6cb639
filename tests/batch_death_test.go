package tests

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// A batch run (a script through run, a notebook through nb run) whose
// interpreter dies fails there, as python3 dies and papermill stops on
// DeadKernelError: the cell is not run again on a fresh interpreter, which
// would repeat its side effects without the state before it, and no later
// cell runs, --keep-going and --allow-errors included. run ends as
// python3 would: an os._exit(3)'s 3, a signal's death by that signal,
// silently both; nb run 1, saying how.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestBatchRunStopsAtADeath(t *testing.T) {
	const exit, kill = "os._exit(3)", "os.kill(os.getpid(), 9)"
	cells := func(dir, die string) []string {
		ledger, flag := strconv.Quote(filepath.Join(dir, "ledger")), strconv.Quote(filepath.Join(dir, "flag"))
		return []string{"total = 100",
			"import os\nopen(" + ledger + ", 'a').write('charge\\n')\nif not os.path.exists(" + flag + "):\n    open(" + flag + ", 'w').close()\n    " + die,
			"print('total', total)"}
	}
	for _, tc := range []struct {
		name string
		args func(t *testing.T, dir string) []string
		code int
		how  string // in the output; "" for none of the host's
	}{
		{"run", func(t *testing.T, dir string) []string {
			c := cells(dir, exit)
			return []string{"run", "-c", c[0], "-c", c[1], "-c", c[2]}
		}, 3, ""},
		{"run --keep-going", func(t *testing.T, dir string) []string {
			c := cells(dir, exit)
			return []string{"run", "--keep-going", "-c", c[0], "-c", c[1], "-c", c[2]}
		}, 3, ""},
		{"run, killed", func(t *testing.T, dir string) []string {
			c := cells(dir, kill)
			return []string{"run", "--keep-going", "-c", c[0], "-c", c[1], "-c", c[2]}
		}, 137, ""}, // killed by SIGKILL, as python3 (a shell's 128+9)
		{"nb run --allow-errors", func(t *testing.T, dir string) []string {
			nb := filepath.Join(dir, "nb.ipynb")
			writeNotebook(t, nb, cells(dir, exit)...)
			return []string{"nb", "run", nb, "-o", filepath.Join(dir, "out.ipynb"), "--allow-errors"}
		}, 1, "exit code 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cmd := command(t, tc.args(t, dir)...)
			out, _ := cmd.CombinedOutput()
			if code := shellStatus(cmd.ProcessState.Sys().(syscall.WaitStatus)); code != tc.code {
				t.Errorf("exit %d after the interpreter died, want %d:\n%s", code, tc.code, out)
			}
			if ledger, _ := os.ReadFile(filepath.Join(dir, "ledger")); string(ledger) != "charge\n" {
				t.Errorf("the dying cell ran %d times, want once:\n%s", strings.Count(string(ledger), "charge"), out)
			}
			if strings.Contains(string(out), "total") || strings.Contains(string(out), "retrying") {
				t.Errorf("a cell ran again after the death:\n%s", out)
			}
			if nb := filepath.Join(dir, "out.ipynb"); fileExists(nb) {
				if c := readNotebook(t, nb)[2]; len(c.Outputs) != 0 || c.ExecutionCount != nil {
					t.Errorf("the notebook's last cell ran after the death: %+v", c)
				}
			}
			if tc.how == "" && strings.Contains(string(out), "[") || !strings.Contains(string(out), tc.how) {
				t.Errorf("the output does not say %q of how the interpreter died:\n%s", tc.how, out)
			}
		})
	}
}

// sys.exit() or exit() in a batch run's cell ends the run there, ok, as
// python3 stops a script and papermill a notebook; later cells never run.
func TestBatchRunStopsAtSysExit(t *testing.T) {
	// The exit's own output (an atexit handler) is still shown, as python3's.
	cells := []string{"import atexit\natexit.register(print, 'bye')\nprint('before')", "import sys\nsys.exit()", "print('after')"}
	pyOut, _, pyCode := python(t, false, "-c", strings.Join(cells, "\n"))
	for _, tc := range []struct {
		name string
		args func(t *testing.T, dir string) []string
	}{
		{"run", func(t *testing.T, dir string) []string {
			return []string{"run", "-c", cells[0], "-c", cells[1], "-c", cells[2]}
		}},
		{"run --keep-going, exit()", func(t *testing.T, dir string) []string {
			return []string{"run", "--keep-going", "-c", cells[0], "-c", "exit()", "-c", cells[2]}
		}},
		// IPython's exit() only asks (it raised AttributeError here before).
		{"run --ipython, exit()", func(t *testing.T, dir string) []string {
			return []string{"run", "--ipython", "-c", cells[0], "-c", "exit()", "-c", cells[2]}
		}},
		{"run --ipython, quit()", func(t *testing.T, dir string) []string {
			return []string{"run", "--ipython", "-c", cells[0], "-c", "quit()", "-c", cells[2]}
		}},
		{"nb run", func(t *testing.T, dir string) []string {
			nb := filepath.Join(dir, "nb.ipynb")
			writeNotebook(t, nb, cells...)
			return []string{"nb", "run", nb, "-o", filepath.Join(dir, "out.ipynb")}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cmd := command(t, tc.args(t, dir)...)
			out, err := cmd.Output()
			if err != nil {
				t.Errorf("exit %v, want 0 as python3 -c's %d", err, pyCode)
			}
			nb := filepath.Join(dir, "out.ipynb")
			if !fileExists(nb) {
				if string(out) != pyOut {
					t.Errorf("stdout %q, python3 -c printed %q", out, pyOut)
				}
				return
			}
			got := readNotebook(t, nb)
			if text(got[0].Outputs[0].Text) != "before\n" || len(got[2].Outputs) != 0 || got[2].ExecutionCount != nil {
				t.Errorf("notebook cells %+v; want the first run and the last untouched", got)
			}
		})
	}
}

// A batch whose interpreter is lost some other way stops too: a timeout
// that had to kill it (with --keep-going), or an exit between two cells
// (here a thread's os._exit(7) while a shell cell ran: run exits 7,
// silently, as python3; TestRunOsExitBetweenCellsAsPython); no later
// Python cell runs on a fresh interpreter without the earlier cells'
// state.
func TestBatchRunStopsWhenStateIsLost(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"timeout that kills, --keep-going", []string{"run", "--keep-going", "--timeout", "1", "--grace", "300ms",
			"-c", "x = 1", "-c", "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(30)", "-c", "print('later', x)"},
			124, "interpreter state was lost"},
		// The shell cell waits until the Python interpreter is gone.
		{"exit between cells", []string{"run", "-"}, 7, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script := "# %%\nimport os, threading\nx = 1\nprint(os.getpid(), file=open('pid', 'w'))\nthreading.Timer(0.1, os._exit, (7,)).start()\n" +
				"# %% [sh]\nwhile kill -0 $(cat pid) 2>/dev/null; do sleep 0.02; done\n" +
				"# %%\nprint('later', x)\n"
			cmd := command(t, tc.args...)
			cmd.Stdin, cmd.Dir = strings.NewReader(script), t.TempDir()
			out, errOut, code := runCaptured(t, cmd, false)
			// A later cell run on a fresh interpreter fails with NameError.
			if code != tc.code || strings.Contains(out, "later") || strings.Contains(errOut, "NameError") || !strings.Contains(errOut, tc.want) ||
				tc.want == "" && errOut != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, no later cell, and %q", code, out, errOut, tc.code, tc.want)
			}
		})
	}
}
