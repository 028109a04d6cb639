package tests

import (
	"strings"
	"testing"
)

// The cells see a filtered environment (an allow-list, secrets stripped);
// --env NAME passes one more variable on, --env NAME=VALUE sets one, one-shot
// and under --session alike. A GPU or thread count passes by itself.
func TestRunEnv(t *testing.T) {
	const show = "import os; print([os.environ.get(n) for n in ('MY_VAR', 'X', 'MY_TOKEN', 'CUDA_VISIBLE_DEVICES')])"
	h := newDaemonHome(t)
	rows := []struct {
		name string
		args []string
		want string
	}{
		{"filtered by default", []string{"run", "-c", show}, "[None, None, None, '1']"},
		{"passed on and set", []string{"run", "--env", "MY_VAR", "--env", "X=a=b", "-c", show}, "['hi', 'a=b', None, '1']"},
		{"a secret's name passes when named", []string{"run", "--env", "MY_TOKEN", "-c", show}, "[None, None, 't0k', '1']"},
		{"an unset name is left out", []string{"run", "--env", "NOT_SET_HERE", "-c", "import os; print('NOT_SET_HERE' in os.environ)"}, "False"},
		{"under --session", []string{"run", "--session", "e", "--env", "MY_VAR", "--env", "X=2", "-c", show}, "['hi', '2', None, '1']"},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			cmd := h.cmd(r.args...)
			cmd.Env = append(cmd.Env, "MY_VAR=hi", "MY_TOKEN=t0k", "CUDA_VISIBLE_DEVICES=1")
			out, errOut, code := runCaptured(t, cmd, false)
			if code != 0 || strings.TrimSpace(out) != r.want {
				t.Fatalf("exit %d, stdout %q, want %q; stderr:\n%s", code, out, r.want, errOut)
			}
		})
	}
	cmd := h.cmd("run", "--env", "=x", "-c", "1")
	if _, errOut, code := runCaptured(t, cmd, false); code != 2 || !strings.Contains(errOut, `--env "=x": want NAME=VALUE`) {
		t.Errorf("--env =x: exit %d, stderr %q; want 2 and what to give", code, errOut)
	}
}
