package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// parityRun runs python3 ARGS... and evalhost run --python python3 ARGS...
// in dir with stdin, and fails t where their stdout, stderr or exit status
// differ. EVALHOST_TEST_PYTHON picks the interpreter for both.
func parityRun(t *testing.T, dir, stdin string, args ...string) {
	t.Helper()
	python := testkit.Python(t)
	py := exec.Command(python, args...)
	py.Dir = dir
	py.Stdin = strings.NewReader(stdin)
	wantOut, wantErr, wantCode := runCaptured(t, py, false)
	cmd := command(t, append([]string{"run", "--python", python}, args...)...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	out, errOut, code := runCaptured(t, cmd, false)
	if out != wantOut {
		t.Errorf("stdout differs from python3's\n got %q\nwant %q", out, wantOut)
	}
	if errOut != wantErr {
		t.Errorf("stderr differs from python3's\n got %q\nwant %q", errOut, wantErr)
	}
	if code != wantCode {
		t.Errorf("exit %d, python3's %d", code, wantCode)
	}
}

// TestRunPdbStackAsPython: a breakpoint() in a script run by evalhost run
// shows pdb the stack python3's shows: where lists the script's frames
// only (not the runner's above its <module>), up stops at <module> with
// "Oldest frame" and down at the breakpoint with "Newest frame". As a
// module (-m), the stack starts at runpy's frames, as python3 -m's.
func TestRunPdbStackAsPython(t *testing.T) {
	const commands = "where\nup\nup\nup\ndown\ndown\ndown\nwhere\nc\n"
	dir := t.TempDir()
	src := "def f():\n    x = 1\n    breakpoint()\n    return x\n\nf()\nprint('after')\n"
	for _, name := range []string{"bp.py", "bpmod.py"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("script", func(t *testing.T) {
		parityRun(t, dir, commands, filepath.Join(dir, "bp.py"))
	})
	t.Run("module", func(t *testing.T) {
		parityRun(t, dir, commands, "-m", "bpmod")
	})
}
