package tests

import (
	"strings"
	"testing"
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
