package tests

import (
	"os"
	"path/filepath"
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

// A command started in a directory removed meanwhile (rm -rf of the
// directory a shell stands in) cannot name it: run (one-shot or
// --session) and kill refuse as a usage error (exit 2) that says so and
// what to do, not with Go's bare "getwd" error. (python3 runs there until
// the script asks for its cwd; evalhost's interpreter is started in the
// session's directory by its path, and asks for its cwd as it starts.)
func TestRemovedCwdSaysWhatToDo(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"run", []string{"run", "-c", "pass"}, "cd to a directory that exists, or give --cwd DIR"},
		{"run a relative FILE", []string{"run", "x.py"}, "cd to a directory that exists, or give --cwd DIR"},
		{"run --session", []string{"run", "--session", "s", "-c", "1"}, "or give --cwd DIR"},
		{"kill", []string{"kill", "s"}, "--cwd DIR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gone := filepath.Join(t.TempDir(), "gone")
			if err := os.Mkdir(gone, 0o700); err != nil {
				t.Fatal(err)
			}
			cmd := command(t, tt.args...)
			// The shell stands in the directory as it is removed, then
			// becomes evalhost there.
			cmd.Args = append([]string{"sh", "-c", `cd "$1" && rmdir "$1" && shift && exec "$@"`, "sh", gone, cmd.Path}, tt.args...)
			cmd.Path = "/bin/sh"
			_, errOut, code := runCaptured(t, cmd, false)
			if code != 2 || !strings.Contains(errOut, "the current directory cannot be read") || !strings.Contains(errOut, tt.want) {
				t.Errorf("exit %d, stderr %q; want 2, saying the current directory cannot be read and %q", code, errOut, tt.want)
			}
		})
	}
}
