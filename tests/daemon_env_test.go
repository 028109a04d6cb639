package tests

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// envStep is one command of a test of what a session's cells see of the
// command's environment: set and unset change the test's environment.
type envStep struct {
	name   string
	set    []string // NAME=VALUE
	unset  []string // NAME
	args   []string
	stdout string
	notice []string // each in stderr; none: stderr empty
	// parity: a one-shot run (the args without --session NAME) in the
	// same environment prints the same stdout, as python3 would.
	parity bool
}

// runEnvSteps runs steps in order in one home, each checked.
func runEnvSteps(t *testing.T, h *daemonHome, steps []envStep) {
	t.Helper()
	for i, s := range steps {
		cmd := h.cmd(s.args...)
		cmd.Env = slices.DeleteFunc(cmd.Env, func(kv string) bool {
			name, _, _ := strings.Cut(kv, "=")
			return slices.Contains(s.unset, name)
		})
		cmd.Env = append(cmd.Env, s.set...)
		stdout, stderr, code := runCaptured(t, cmd, false)
		ok := code == 0 && stdout == s.stdout && (len(s.notice) > 0 || stderr == "")
		for _, w := range s.notice {
			ok = ok && strings.Contains(stderr, w)
		}
		if len(s.notice) > 0 && strings.Count(stderr, "\n") != 1 {
			ok = false // told once, in one line
		}
		if !ok {
			t.Fatalf("step %d (%s), %v with %v, %v unset: exit %d, stdout %q, stderr %q; want exit 0, stdout %q, stderr with %q",
				i, s.name, s.args, s.set, s.unset, code, stdout, stderr, s.stdout, s.notice)
		}
		if !s.parity {
			continue
		}
		at := slices.Index(s.args, "--session")
		oneShot := slices.Delete(slices.Clone(cmd.Args[1:]), at, at+2)
		one := h.cmd(oneShot...)
		one.Env = cmd.Env
		if out, stderr, code := runCaptured(t, one, false); code != 0 || out != stdout {
			t.Fatalf("step %d (%s): one-shot %v: exit %d, stdout %q, stderr %q; want stdout %q as with --session", i, s.name, oneShot, code, out, stderr, stdout)
		}
	}
}

// TestDaemonCommandPath: a session's cells find programs on the PATH of
// the command that runs them, as python3 run with that PATH does; they
// found only those on the PATH of the command that started the background
// process. A cell's own change to PATH lasts while the commands' PATH does
// not change, as a session's state does.
func TestDaemonCommandPath(t *testing.T) {
	h := newDaemonHome(t)
	bin := t.TempDir()
	tool := filepath.Join(bin, "evh-tool")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\necho tool ran\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	base := os.Getenv("PATH")
	withBin := "PATH=" + bin + string(os.PathListSeparator) + base
	const find = "import shutil, subprocess\nprint(shutil.which('evh-tool'))\nif shutil.which('evh-tool'): subprocess.run(['evh-tool'])"
	const shFind = "command -v evh-tool || echo none"
	py := func(code ...string) []string {
		args := []string{"run", "--session", "s"}
		for _, c := range code {
			args = append(args, "-c", c)
		}
		return args
	}
	sh := []string{"run", "--session", "s", "--language", "sh", "-c", shFind}
	const tagPath = "import os\nos.environ['PATH'] += os.pathsep + '/evh-own'"
	const tagged = "import os\nprint(os.environ['PATH'].endswith('/evh-own'))"
	runEnvSteps(t, h, []envStep{
		{name: "started", args: py(find), stdout: "None\n", parity: true},
		{name: "shell started", args: sh, stdout: "none\n", parity: true},
		{name: "PATH with the tool", set: []string{withBin}, args: py(find), stdout: tool + "\ntool ran\n", parity: true},
		{name: "shell, PATH with the tool", set: []string{withBin}, args: sh, stdout: tool + "\n", parity: true},
		{name: "PATH without it again", args: py(find), stdout: "None\n", parity: true},
		{name: "a cell's change, in the next cell", args: py(tagPath, tagged), stdout: "True\n"},
		{name: "a cell's change, the same PATH", args: py(tagged), stdout: "True\n"},
		{name: "a cell's change, another PATH", set: []string{withBin}, args: py(tagged), stdout: "False\n"},
	})
}

// TestDaemonCommandPathNotUTF8: a command's PATH naming a directory
// whose name is not UTF-8 reaches a running interpreter byte for byte, as
// it reaches one it starts: each such byte became U+FFFD on the way (the
// runner's request encoded env as UTF-8), and the cells found nothing
// there.
func TestDaemonCommandPathNotUTF8(t *testing.T) {
	h := newDaemonHome(t)
	bin := filepath.Join(t.TempDir(), "bin\xff\xe9")
	if err := os.Mkdir(bin, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "evh-tool"), []byte("#!/bin/sh\necho tool ran\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	withBin := "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")
	const find = "import os, shutil, subprocess\nw = shutil.which('evh-tool')\nprint(w and os.fsencode(w).startswith(os.fsencode(os.environ['PATH'].split(os.pathsep)[0])))\nif w: subprocess.run(['evh-tool'])"
	py := []string{"run", "--session", "s", "-c", find}
	runEnvSteps(t, h, []envStep{
		{name: "started without it", args: py, stdout: "None\n", parity: true},
		{name: "PATH with it", set: []string{withBin}, args: py, stdout: "True\ntool ran\n", parity: true},
		{name: "shell, PATH with it", set: []string{withBin}, args: []string{"run", "--session", "s", "--language", "sh", "-c", "evh-tool"}, stdout: "tool ran\n", parity: true},
	})
}

// TestDaemonCommandVirtualEnv: VIRTUAL_ENV as the command has it (an
// interpreter named by --python, not a venv's, leaves it as it is), unset
// when the command has none, as a one-shot run's cells see it.
func TestDaemonCommandVirtualEnv(t *testing.T) {
	h := newDaemonHome(t)
	args := []string{"run", "--session", "s", "--python", testkit.Python(t), "-c", "import os; print(os.environ.get('VIRTUAL_ENV'))"}
	runEnvSteps(t, h, []envStep{
		{name: "none", unset: []string{"VIRTUAL_ENV"}, args: args, stdout: "None\n", parity: true},
		{name: "set", set: []string{"VIRTUAL_ENV=/evh-venv"}, args: args, stdout: "/evh-venv\n", parity: true},
		{name: "unset again", unset: []string{"VIRTUAL_ENV"}, args: args, stdout: "None\n", parity: true},
	})
}

// TestDaemonCommandPythonpath: a session's interpreter takes PYTHONPATH
// into sys.path as it starts, so a command whose PYTHONPATH differs from
// the one it started with is told so, once, with what to do (end the
// session), and its cells run without it; a session a command starts
// takes that command's, as python3 run with it does. It took the
// environment of the command that started the background process,
// silently.
func TestDaemonCommandPythonpath(t *testing.T) {
	h := newDaemonHome(t)
	pp, other := t.TempDir(), t.TempDir()
	in := func(session, dir string) []string {
		return []string{"run", "--session", session, "-c", "import sys; print(" + pyQuote(dir) + " in sys.path)"}
	}
	runEnvSteps(t, h, []envStep{
		{name: "started without", unset: []string{"PYTHONPATH"}, args: in("s", pp), stdout: "False\n"},
		{name: "given", set: []string{"PYTHONPATH=" + pp}, args: in("s", pp), stdout: "False\n",
			notice: []string{"session s's py interpreter started with PYTHONPATH unset", "this command's is " + pp, `"evalhost kill s"`}},
		{name: "given again: told again", set: []string{"PYTHONPATH=" + pp}, args: in("s", pp), stdout: "False\n",
			notice: []string{"PYTHONPATH unset", "this command's is " + pp}},
		{name: "a shell cell takes it", set: []string{"PYTHONPATH=" + pp}, args: []string{"run", "--session", "s", "--language", "sh", "-c", `echo "$PYTHONPATH"`},
			stdout: pp + "\n"},
		{name: "ended", args: []string{"kill", "s"}, stdout: "ended session s\n"},
		{name: "started with it", set: []string{"PYTHONPATH=" + pp}, args: in("s", pp), stdout: "True\n", parity: true},
		{name: "another session, another PYTHONPATH", set: []string{"PYTHONPATH=" + other}, args: in("t", other), stdout: "True\n", parity: true},
		{name: "unset", unset: []string{"PYTHONPATH"}, args: in("s", pp), stdout: "True\n",
			notice: []string{"session s's py interpreter started with PYTHONPATH " + pp, "this command's is unset"}},
	})
}

// pyQuote is s as a Python string literal (no quotes or backslashes in s).
func pyQuote(s string) string { return "'" + s + "'" }

// TestDaemonShellOnlyCommandKeysItsSession: a command of shell cells alone
// finds its session as a command with Python cells in that environment
// does, by the python3 its PATH gives: the shell's state is the session's.
// It resolved python3 in the background process's environment instead, so
// under another PATH (a venv's) its cells ran in a second session of the
// same name and directory, and the next command there did not see them.
func TestDaemonShellOnlyCommandKeysItsSession(t *testing.T) {
	h := newDaemonHome(t)
	bin := t.TempDir() // a PATH whose python3 is another path: a venv's, say
	if err := os.Symlink(testkit.Python(t), filepath.Join(bin, "python3")); err != nil {
		t.Fatal(err)
	}
	withBin := "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")
	both := filepath.Join(t.TempDir(), "both.py")
	if err := os.WriteFile(both, []byte("# %% [sh]\necho \"X=$X\"\n# %%\nprint('py')\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	runEnvSteps(t, h, []envStep{
		{name: "started by a command on the usual PATH", args: []string{"run", "--session", "s", "-c", "print(0)"}, stdout: "0\n"},
		{name: "shell cells alone, on the other PATH", set: []string{withBin},
			args: []string{"run", "--session", "s", "--language", "sh", "-c", "X=kept; echo set"}, stdout: "set\n"},
		{name: "shell and Python cells, on the other PATH", set: []string{withBin}, args: []string{"run", "--session", "s", both}, stdout: "X=kept\npy\n"},
	})
	out, stderr, code := h.run("sessions")
	if code != 0 || strings.Count(out, "\ns ") != 2 {
		t.Errorf("evalhost sessions: exit %d, %q %s; want session s twice: the first PATH's python3 and the other's", code, out, stderr)
	}
}
