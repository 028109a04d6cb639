package tests

import (
	"os"
	"testing"
)

// run reads PYTHONUNBUFFERED from its own environment as python3 does
// (container images set it so a service's output is not held back): a
// print right before the process is killed is kept with it, lost without
// it, as python3's is, and -E ignores it. The cells' environment never
// holds the variable; it is python3's -u for them.
func TestRunHonoursPythonUnbuffered(t *testing.T) {
	const src = "import os, signal; print('printed'); os.kill(os.getpid(), signal.SIGKILL)"
	for _, tc := range []struct {
		name  string
		value string
		args  []string
	}{
		{"set", "1", nil},
		{"unset", "", nil},
		{"set, and -E", "1", []string{"-E"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := "PYTHONUNBUFFERED=" + tc.value
			cmd := command(t, append(append([]string{"run"}, tc.args...), "-c", src)...)
			cmd.Env = append(cmd.Env, env)
			out, _, code := runCaptured(t, cmd, false)
			py := pythonCmd(t, append(tc.args, "-c", src)...)
			py.Env = append(os.Environ(), env)
			pyOut, _, pyCode := runCaptured(t, py, false)
			if out != pyOut || code != pyCode {
				t.Errorf("stdout %q, status %d; python3 printed %q, status %d", out, code, pyOut, pyCode)
			}
		})
	}
}
