package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestArtifactsDirOfAnotherUser: a PI_ARTIFACTS_DIR that another user owns
// is refused even when only they may write it (the tester's 0755
// /tmp/shared-art: its owner could swap a 0600 artifact for a forged one);
// the cell still runs, its output bounded in memory, and the notice says
// why nothing was spilled and what to do.
func TestArtifactsDirOfAnotherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("making another user's directory needs root")
	}
	dir := filepath.Join(t.TempDir(), "shared-art")
	mkdirAs(t, dir, 0o755, nobody)
	cmd := command(t, "run", "--max-output", "100", "-c", "print('SECRET-LOOKING OUTPUT ' * 50)")
	cmd.Env = append(cmd.Env, "PI_ARTIFACTS_DIR="+dir)
	stdout, stderr, code := runCaptured(t, cmd, false)
	if code != 0 || !strings.Contains(stdout, "SECRET-LOOKING OUTPUT") {
		t.Errorf("exit %d, stdout %q; want the cell's tail", code, stdout)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("artifacts written into another user's directory: %v", ents)
	}
	all := stdout + stderr
	for _, want := range []string{dir + " (PI_ARTIFACTS_DIR): it is owned by uid 65534", "use a directory of your own"} {
		if !strings.Contains(all, want) {
			t.Errorf("output lacks %q:\nstdout %s\nstderr %s", want, stdout, stderr)
		}
	}
}

// TestRelativeArtifactsDir: a relative PI_ARTIFACTS_DIR names a directory
// in the command's cwd, for run --session as for a one-shot run: the
// background process runs in /, where it made (as root) /NAME and spilled
// there, and the notice named NAME/1.eval.log, which the user's cwd did
// not hold.
func TestRelativeArtifactsDir(t *testing.T) {
	for _, args := range [][]string{
		{"run"},
		{"run", "--session", "s"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			h := newDaemonHome(t)
			cwd := t.TempDir()
			name := filepath.Base(filepath.Dir(cwd)) + "-artifacts" // the test's own, in / too
			cmd := h.cmd(append(args, "--max-output", "100", "-c", "print('x' * 5000)")...)
			cmd.Dir = cwd
			cmd.Env = append(cmd.Env, "PI_ARTIFACTS_DIR="+name)
			stdout, stderr, code := runCaptured(t, cmd, false)
			want := filepath.Join(cwd, name, "1.eval.log")
			if code != 0 || !strings.Contains(stdout+stderr, "at "+want+"]") {
				t.Errorf("exit %d, stdout %q, stderr %q; want a notice naming %s", code, stdout, stderr, want)
			}
			if _, err := os.Stat(want); err != nil {
				t.Errorf("the artifact is not in the cwd's %s: %v", name, err)
			}
			if _, err := os.Lstat(filepath.Join("/", name)); err == nil {
				os.RemoveAll(filepath.Join("/", name))
				t.Errorf("/%s was made", name)
			}
		})
	}
}
