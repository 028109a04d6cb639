package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A session's directory removed and made again (rm -rf d; mkdir d; cd d)
// is another directory: run --session there starts a fresh session in it,
// as python3 started there runs there, and says once why the state from
// before is gone. The background process kept the interpreter in the
// removed directory, where os.getcwd() failed (FileNotFoundError) and
// files written went nowhere. Twice: the second time the process watches
// the directory (a key used more than once).
func TestDaemonRecreatedCwdIsANewSession(t *testing.T) {
	h := newDaemonHome(t)
	d := filepath.Join(t.TempDir(), "d")
	in := func(args ...string) (string, string, int) {
		cmd := h.cmd(args...)
		cmd.Dir = d
		return runCaptured(t, cmd, false)
	}
	const cell = "import os\nopen('f', 'w').write('1')\nprint(os.getcwd(), sorted(os.listdir('.')), 'x' in dir())"
	for round := range 2 {
		if err := os.RemoveAll(d); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		out, stderr, code := in("run", "--session", "s", "-c", cell)
		py := exec.Command("python3", "-c", cell) // what python3 started there says
		py.Dir = d
		want, err := py.Output()
		if err != nil {
			t.Fatal(err)
		}
		notice := "[state lost: session s's py interpreter was left in " + d + ", a directory since removed"
		if code != 0 || out != string(want) || (round > 0) != strings.Contains(stderr, notice) || strings.Count(stderr, "state lost") > 1 {
			t.Fatalf("round %d: exit %d, stdout %q, stderr %q; want a fresh session in the new %s, the loss told once after the first", round, code, out, stderr, d)
		}
		for range 3 { // state kept while the directory stays
			if _, stderr, code := in("run", "--session", "s", "-c", "x = 1"); code != 0 {
				t.Fatal(stderr)
			}
		}
	}
	if out, _, _ := h.run("sessions"); strings.Count(out, "\ns ") != 1 {
		t.Fatalf("sessions lists s other than once:\n%s", out)
	}
}

// One directory reached through a symbolic link and by its own path is one
// session, as python3 started in either is in one directory (os.getcwd()
// names it by its own path): run --session keyed the shell's path ($PWD),
// and made two interpreters. sessions lists it by that path, and kill
// ends it from either, or named by either with --cwd.
func TestDaemonLinkedCwdIsOneSession(t *testing.T) {
	h := newDaemonHome(t)
	base := t.TempDir()
	real := filepath.Join(base, "real")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "link")
	if err := os.Symlink("real", link); err != nil {
		t.Fatal(err)
	}
	physical, err := filepath.EvalSymlinks(real) // the temp dir may be under a link (macOS's /var)
	if err != nil {
		t.Fatal(err)
	}
	in := func(dir string, args ...string) (string, string, int) {
		cmd := h.cmd(args...)
		cmd.Dir = dir
		cmd.Env = append(cmd.Env, "PWD="+dir) // the shell's path, as after cd DIR
		return runCaptured(t, cmd, false)
	}
	if _, stderr, code := in(link, "run", "--session", "s", "-c", "x = 1"); code != 0 {
		t.Fatal(stderr)
	}
	if out, stderr, code := in(real, "run", "--session", "s", "-c", "import os; print(x, os.getcwd())"); code != 0 || out != "1 "+physical+"\n" {
		t.Fatalf("in %s: exit %d, stdout %q, stderr %q; want the session started through %s", real, code, out, stderr, link)
	}
	out, _, _ := h.run("sessions")
	if strings.Count(out, "\ns ") != 1 || !strings.Contains(out, " "+physical+" ") {
		t.Fatalf("sessions lists:\n%s\nwant s once, in %s", out, physical)
	}
	for _, kill := range []struct {
		dir  string
		args []string
	}{
		{link, []string{"kill", "s"}},
		{real, []string{"kill", "--cwd", link, "s"}},
	} {
		if _, stderr, code := in(real, "run", "--session", "s", "-c", "x = 1"); code != 0 {
			t.Fatal(stderr)
		}
		if out, stderr, code := in(kill.dir, kill.args...); code != 0 || out != "ended session s\n" {
			t.Fatalf("%v in %s: exit %d, stdout %q, stderr %q", kill.args, kill.dir, code, out, stderr)
		}
		if out, _, _ := h.run("sessions"); out != "no sessions\n" {
			t.Fatalf("after %v in %s, sessions lists:\n%s", kill.args, kill.dir, out)
		}
	}
}

// A command's cells start in the directory it runs in, as python3's do,
// whatever an earlier command's cell did with its interpreter's (os.chdir,
// cd): it lasted, so a later command's cells ran in a directory it did not
// name, untold, or in one since removed, where os.getcwd() failed with a
// bare FileNotFoundError. Within a command a cell's change lasts into the
// next cell, as in one script.
func TestDaemonCommandStartsInItsCwd(t *testing.T) {
	h := newDaemonHome(t)
	d := physicalTempDir(t)
	sub := filepath.Join(d, "sub")
	in := func(args ...string) (string, string, int) {
		cmd := h.cmd(args...)
		cmd.Dir = d
		return runCaptured(t, cmd, false)
	}
	py := func(code ...string) []string {
		args := []string{"run", "--session", "s"}
		for _, c := range code {
			args = append(args, "-c", c)
		}
		return args
	}
	const where = "import os; print(os.getcwd())"
	sh := func(code string) []string { return []string{"run", "--session", "s", "--language", "sh", "-c", code} }
	for i, step := range []struct {
		name   string
		before func() error
		args   []string
		stdout string
	}{
		{"a cell moves, the next cell of the command is there", func() error { return os.Mkdir(sub, 0o700) },
			py("import os; os.chdir('sub')", where), sub + "\n"},
		{"the next command starts in its own", nil, py(where), d + "\n"},
		{"a shell cell moves", nil, sh("cd sub && pwd"), sub + "\n"},
		{"the next command's shell starts in its own", nil, sh("pwd"), d + "\n"},
		{"moved into a directory since removed", nil, py("import os; os.chdir('sub')"), ""},
		{"the next command starts in its own", func() error { return os.Remove(sub) },
			py(where, "open('f', 'w').write('x'); print(open(os.path.join("+pyQuote(d)+", 'f')).read())"), d + "\nx\n"},
	} {
		if step.before != nil {
			if err := step.before(); err != nil {
				t.Fatal(err)
			}
		}
		out, stderr, code := in(step.args...)
		if code != 0 || out != step.stdout || stderr != "" {
			t.Fatalf("step %d (%s): exit %d, stdout %q, stderr %q; want stdout %q", i, step.name, code, out, stderr, step.stdout)
		}
	}
}

// A session's directory renamed (mv d e) is the same directory: run
// --session NAME from its new path reaches the session, its state kept,
// and runs its cells there, as python3 started there would; it started a
// fresh one, silently, and the state stayed with a session listed under a
// path that no longer exists.
func TestDaemonRenamedCwdKeepsSession(t *testing.T) {
	h := newDaemonHome(t)
	base := physicalTempDir(t)
	d, e := filepath.Join(base, "d"), filepath.Join(base, "e")
	if err := os.Mkdir(d, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d, "evh_mod.py"), []byte("v = 7\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	in := func(dir string, args ...string) (string, string, int) {
		cmd := h.cmd(args...)
		cmd.Dir = dir
		return runCaptured(t, cmd, false)
	}
	if _, stderr, code := in(d, "run", "--session", "s", "-c", "x = 1"); code != 0 {
		t.Fatal(stderr)
	}
	if _, stderr, code := in(d, "run", "--session", "s", "--language", "sh", "-c", "y=2"); code != 0 {
		t.Fatal(stderr)
	}
	if err := os.Rename(d, e); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := in(e, "run", "--session", "s", "-c", "import os, evh_mod; print(x, os.getcwd(), evh_mod.v)")
	if code != 0 || out != "1 "+e+" 7\n" || stderr != "" {
		t.Fatalf("from %s: exit %d, stdout %q, stderr %q; want session s's state, run in %s", e, code, out, stderr, e)
	}
	if out, stderr, code := in(e, "run", "--session", "s", "--language", "sh", "-c", "echo $y $PWD"); code != 0 || out != "2 "+e+"\n" {
		t.Fatalf("sh from %s: exit %d, stdout %q, stderr %q; want session s's state, run in %s", e, code, out, stderr, e)
	}
	if out, _, _ := h.run("sessions"); strings.Count(out, "\ns ") != 1 || !strings.Contains(out, " "+e+" ") {
		t.Fatalf("sessions lists:\n%s\nwant s once, in %s", out, e)
	}
}

// physicalTempDir is t.TempDir() by its own path, as os.getcwd() names it
// (the temp dir may be under a link: macOS's /var).
func physicalTempDir(t *testing.T) string {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return d
}
