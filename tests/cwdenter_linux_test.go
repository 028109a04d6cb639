package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// A working directory this user may not enter is refused naming it and
// the cause, in run and in serve. The interpreter's start failed there as
// "reaper: run /proc/self/exe: permission denied" (run, serve) or
// "reaper: run /usr/bin/python3: permission denied" (run --session).
// Root enters any directory, so the commands run as nobody (65534), on a
// copy of the binary and an interpreter that user can reach.
func TestCwdNotEnterableIsSaid(t *testing.T) {
	u := newOtherUser(t)
	locked := filepath.Join(u.base, "locked")
	if err := os.Mkdir(locked, 0o700); err != nil {
		t.Fatal(err)
	}
	const want = "working directory " // and then the directory and the cause
	for _, tc := range []struct {
		name string
		cmd  *exec.Cmd
	}{
		{"run", u.cmd(u.exe, "run", "--python", u.py, "--cwd", locked, "-c", "print(1)")},
		{"serve", u.cmd(u.exe, "serve", "--python", u.py, "--progress", "0")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "serve" {
				tc.cmd.Stdin = strings.NewReader(`{"op":"eval","id":"a","cwd":"` + locked + `","cells":[{"code":"1"}]}` + "\n")
			}
			out, _ := tc.cmd.CombinedOutput()
			if !strings.Contains(string(out), want+locked+" cannot be used: permission denied: this user may not enter it") {
				t.Errorf("output %q; want it to name %s and say it may not be entered", out, locked)
			}
		})
	}
}

// A current directory this user may no longer search (chmod 000 of the
// directory a shell stands in) is refused as a usage error saying so and
// what to do, by run (one-shot and --session) and kill: they said it "was
// removed or moved away" and to cd to "a directory that exists", which it
// is. (python3 runs there until it opens a file by a relative path;
// evalhost's interpreter is started in the directory by its path.)
func TestCwdNotSearchableIsSaid(t *testing.T) {
	u := newOtherUser(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"run", []string{"run", "--python", u.py, "-c", "print(1)"}, "cd to a directory this user may enter, or give --cwd DIR"},
		{"run --session", []string{"run", "--python", u.py, "--session", "s", "-c", "1"}, "cd to a directory this user may enter, or give --cwd DIR"},
		{"kill", []string{"kill", "s"}, "--cwd DIR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(u.base, "unsearchable-"+strings.NewReplacer(" ", "-", ".", "dot").Replace(tc.name))
			if err := os.Mkdir(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Chown(dir, u.uid, u.uid); err != nil {
				t.Fatal(err)
			}
			// The shell stands in the directory as it takes its own x away,
			// then becomes the command there.
			cmd := u.cmd(append([]string{"/bin/sh", "-c", `cd "$1" && chmod 000 . && shift && exec "$@"`, "sh", dir, u.exe}, tc.args...)...)
			_, errOut, code := runCaptured(t, cmd, false)
			if code != 2 || !strings.Contains(errOut, "this user may not search it") || !strings.Contains(errOut, tc.want) ||
				strings.Contains(errOut, "removed") && tc.name != "kill" {
				t.Errorf("exit %d, stderr %q; want 2, saying the directory may not be searched and %q", code, errOut, tc.want)
			}
		})
	}
}

// otherUser runs commands as uid nobody (65534), on a copy of the binary in base (a
// directory that user may enter) with a home of its own, and an
// interpreter that user can run.
type otherUser struct {
	uid        int
	base, home string
	exe, py    string
}

// newOtherUser sets one up, or skips t when not root or no interpreter is
// that user's to run.
func newOtherUser(t *testing.T) *otherUser {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run commands as another user")
	}
	u := &otherUser{uid: nobody}
	base, err := os.MkdirTemp("", "cwdenter-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	u.base, u.home = base, filepath.Join(base, "home")
	if err := os.Mkdir(u.home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(u.home, u.uid, u.uid); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	u.exe = filepath.Join(base, "evalhost")
	b, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(u.exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{testkit.Python(t), "/usr/bin/python3", "/usr/local/bin/python3"} {
		if u.cmd(p, "-c", "pass").Run() == nil {
			u.py = p
			break
		}
	}
	if u.py == "" {
		t.Skip("no interpreter uid 65534 can run")
	}
	return u
}

// cmd is args[0] with the rest, run as the user from base.
func (u *otherUser) cmd(args ...string) *exec.Cmd {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = u.base
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + u.home, "EVALHOST_HOME=" + filepath.Join(u.home, "eh")}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(u.uid)}}
	return cmd
}
