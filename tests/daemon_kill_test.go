package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/testkit"
)

// evalhost kill NAME ends the session NAME of the current directory, the
// row evalhost sessions lists with that NAME and CWD; the same NAME in
// another directory is another session and lives on (kill ended it in
// every directory). --cwd DIR names another directory, --all every one;
// a NAME open only elsewhere is not ended, and the refusal says where.
func TestDaemonKillEndsTheCwdsSession(t *testing.T) {
	h := newDaemonHome(t)
	dirs := map[string]string{"a": t.TempDir(), "b": t.TempDir(), "c": t.TempDir()}
	in := func(d string, args ...string) (string, string, int) {
		cmd := h.cmd(args...)
		cmd.Dir = dirs[d]
		return runCaptured(t, cmd, false)
	}
	steps := []struct {
		name, dir  string
		args       []string
		code       int
		stdout     string
		stderrPart string // "" for none
	}{
		{"x in a", "a", []string{"run", "--session", "s", "-c", "x = 'a'"}, 0, "", ""},
		{"x in b", "b", []string{"run", "--session", "s", "-c", "x = 'b'"}, 0, "", ""},
		{"kill in a", "a", []string{"kill", "s"}, 0, "ended session s\n", ""},
		{"b's session lives on", "b", []string{"run", "--session", "s", "-c", "print(x)"}, 0, "b\n", ""},
		{"a's is gone, without a notice", "a", []string{"run", "--session", "s", "-c", "print('x' in dir())"}, 0, "False\n", ""},
		{"kill where s is not open names where it is", "c", []string{"kill", "s"}, 1, "", "it is open in "},
		{"kill --cwd DIR", "c", []string{"kill", "--cwd", dirs["a"], "s"}, 0, "ended session s\n", ""},
		{"b's session still lives", "b", []string{"run", "--session", "s", "-c", "print(x)"}, 0, "b\n", ""},
		{"kill --all", "c", []string{"kill", "--all", "s"}, 0, "ended session s in every directory\n", ""},
		{"b's is gone too", "b", []string{"run", "--session", "s", "-c", "print('x' in dir())"}, 0, "False\n", ""},
		{"--cwd with --all", "c", []string{"kill", "--all", "--cwd", dirs["a"], "s"}, 2, "", "exclude each other"},
	}
	for _, s := range steps {
		out, errOut, code := in(s.dir, s.args...)
		if code != s.code || out != s.stdout || (s.stderrPart != "" && !strings.Contains(errOut, s.stderrPart)) ||
			(s.stderrPart == "" && errOut != "") {
			t.Fatalf("%s: exit %d stdout %q stderr %q; want exit %d stdout %q stderr %q",
				s.name, code, out, errOut, s.code, s.stdout, s.stderrPart)
		}
	}
}

// A command started in a directory removed meanwhile (rm -rf of the
// directory a shell stands in) cannot name it: run (one-shot or
// --session) and kill refuse as a usage error (exit 2) that says so and
// what to do, not with Go's bare "getwd" error. (python3 runs there until
// the script asks for its cwd; evalhost's interpreter is started in the
// session's directory by its path, and asks for its cwd as it starts.)
// With --cwd DIR a relative FILE is still relative to the removed
// directory, as python3's would be ("can't open file", exit 2): the
// refusal says to give its absolute path, not to give --cwd DIR
// (TestRemovedCwdWithCwdRunsAnAbsoluteFile: that path runs).
func TestRemovedCwdSaysWhatToDo(t *testing.T) {
	dir := t.TempDir() // --cwd DIR
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"run", []string{"run", "-c", "pass"}, "cd to a directory that exists, or give --cwd DIR"},
		{"run a relative FILE", []string{"run", "x.py"}, "cd to a directory that exists, or give --cwd DIR and x.py's absolute path"},
		{"run --cwd DIR, a relative FILE", []string{"run", "--cwd", dir, "x.py"}, "cd to a directory that exists, or give x.py's absolute path"},
		{"run --cwd DIR, a relative FILE after --", []string{"run", "--cwd", dir, "--", "x.py"}, "or give x.py's absolute path"},
		{"run --cwd .", []string{"run", "--cwd", ".", "-c", "pass"}, "cd to a directory that exists, or give DIR's absolute path"},
		{"run --session", []string{"run", "--session", "s", "-c", "1"}, "or give --cwd DIR"},
		{"run --session, a relative FILE", []string{"run", "--session", "s", "x.py"}, "or give --cwd DIR and x.py's absolute path"},
		{"run --session --cwd DIR, a relative FILE", []string{"run", "--session", "s", "--cwd", dir, "x.py"}, "or give x.py's absolute path"},
		{"kill", []string{"kill", "s"}, "--cwd DIR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, errOut, code := runCaptured(t, inRemovedDir(t, command(t, tt.args...)), false)
			if code != 2 || !strings.Contains(errOut, "the current directory cannot be read") || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want 2, saying the current directory cannot be read and %q", code, errOut, tt.want)
			}
		})
	}
}

// inRemovedDir makes cmd run from a directory removed meanwhile: the shell
// stands in the directory as it is removed, then becomes cmd there.
func inRemovedDir(t *testing.T, cmd *exec.Cmd) *exec.Cmd {
	gone := filepath.Join(t.TempDir(), "gone")
	if err := os.Mkdir(gone, 0o700); err != nil {
		t.Fatal(err)
	}
	cmd.Args = append([]string{"sh", "-c", `cd "$1" && rmdir "$1" && shift && exec "$@"`, "sh", gone, cmd.Path}, cmd.Args[1:]...)
	cmd.Path = "/bin/sh"
	return cmd
}

// From a removed directory, python3 runs a script given by its absolute
// path (until it asks for its cwd), and so does run --cwd DIR, one-shot or
// attached, in DIR.
func TestRemovedCwdWithCwdRunsAnAbsoluteFile(t *testing.T) {
	dir := t.TempDir()
	script := writeScript(t, t.TempDir(), "abs.py", "import sys\nprint('ran', sys.argv[1:])\n")
	// The interpreter itself: a version manager's shim (pyenv's) fails to
	// start in a removed directory.
	pyOut, pyErr, pyCode := runCaptured(t, inRemovedDir(t, exec.Command(testkit.Python(t), script, "a")), false)
	if pyOut != "ran ['a']\n" || pyCode != 0 {
		t.Fatalf("python3 printed %q, %q, exit %d; want it to run", pyOut, pyErr, pyCode)
	}
	for _, tc := range []struct {
		name string
		cmd  func(t *testing.T) *exec.Cmd
	}{
		{"one-shot", func(t *testing.T) *exec.Cmd { return command(t, "run", "--cwd", dir, script, "a") }},
		{"--session", func(t *testing.T) *exec.Cmd {
			return newDaemonHome(t).cmd("run", "--session", "s", "--cwd", dir, script, "a")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := runCaptured(t, inRemovedDir(t, tc.cmd(t)), false)
			if out != pyOut || code != pyCode {
				t.Errorf("stdout %q, exit %d, stderr %q; python3 printed %q, exit %d", out, code, errOut, pyOut, pyCode)
			}
		})
	}
}

// A command waiting in its session's queue when another command ends that
// session (evalhost kill) ran nothing: it exits 1, as the command whose
// running cell the kill stopped does, not 130, which says that its own
// Ctrl-C interrupted it.
func TestDaemonKillOfAQueuedCommandExits1(t *testing.T) {
	h := newDaemonHome(t)
	pid := h.pid("s")
	for attempt := 0; ; attempt++ {
		if attempt == 20 {
			t.Fatal("the kill never came while the second command waited in the queue")
		}
		first, _ := h.startRunning(t, "run", "--session", "s", "-c", "import time\nprint('running', flush=True)\ntime.sleep(60)")
		conns := socketsOf(t, pid)
		second := h.cmd("run", "--session", "s", "-c", "print('ran')")
		var stderr strings.Builder
		second.Stderr = &stderr
		if err := second.Start(); err != nil {
			t.Fatal(err)
		}
		for socketsOf(t, pid) <= conns { // it has connected, and sent its cell with the connection
			time.Sleep(time.Millisecond)
		}
		if _, errOut, code := h.run("kill", "s"); code != 0 {
			t.Fatalf("kill: exit %d: %s", code, errOut)
		}
		code := exitCodeOf(t, second)
		if c := exitCodeOf(t, first); c != 1 {
			t.Fatalf("the running command: exit %d, want 1", c)
		}
		if !strings.Contains(stderr.String(), "not run: the session was closed") {
			continue // the kill came before its cell was queued: it ran in a fresh session
		}
		if code != 1 {
			t.Fatalf("the queued command: exit %d, stderr %q; want exit 1", code, &stderr)
		}
		return
	}
}
