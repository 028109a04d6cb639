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
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run commands as another user")
	}
	const uid = 65534
	base, err := os.MkdirTemp("", "cwdenter-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	locked, home := filepath.Join(base, "locked"), filepath.Join(base, "home")
	for _, d := range []string{locked, home} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chown(home, uid, uid); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(base, "evalhost")
	b, err := os.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(exe, b, 0o755); err != nil {
		t.Fatal(err)
	}
	asNobody := func(args ...string) *exec.Cmd {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = base
		cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home, "EVALHOST_HOME=" + filepath.Join(home, "eh")}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
		return cmd
	}
	py := ""
	for _, p := range []string{testkit.Python(t), "/usr/bin/python3", "/usr/local/bin/python3"} {
		if asNobody(p, "-c", "pass").Run() == nil {
			py = p
			break
		}
	}
	if py == "" {
		t.Skip("no interpreter uid 65534 can run")
	}
	const want = "working directory " // and then the directory and the cause
	for _, tc := range []struct {
		name string
		cmd  *exec.Cmd
	}{
		{"run", asNobody(exe, "run", "--python", py, "--cwd", locked, "-c", "print(1)")},
		{"serve", asNobody(exe, "serve", "--python", py, "--progress", "0")},
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
