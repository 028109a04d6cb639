package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The cells see a filtered environment (an allow-list, secrets stripped);
// --env NAME passes one more variable on, --env NAME=VALUE sets one, one-shot
// and under --session alike. A GPU or thread count passes by itself.
func TestRunEnv(t *testing.T) {
	const show = "import os; print([os.environ.get(n) for n in ('MY_VAR', 'X', 'MY_TOKEN', 'CUDA_VISIBLE_DEVICES')])"
	const showBytes = "import os; print([os.environb.get(n) for n in (b'MY_VAR', b'X')])"
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
		// A value's bytes, as the one-shot run's interpreter takes them
		// from its environment: they reached the session's as U+FFFD.
		{"bytes that are not UTF-8", []string{"run", "--env", "X=a\xffb", "--env", "MY_VAR", "-c", showBytes}, `[b'hi\xfe', b'a\xffb']`},
		{"bytes that are not UTF-8, under --session", []string{"run", "--session", "e", "--env", "X=a\xffb", "--env", "MY_VAR", "-c", showBytes}, `[b'hi\xfe', b'a\xffb']`},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			cmd := h.cmd(r.args...)
			cmd.Env = append(cmd.Env, "MY_VAR=hi", "MY_TOKEN=t0k", "CUDA_VISIBLE_DEVICES=1")
			if strings.Contains(r.name, "UTF-8") {
				cmd.Env = append(cmd.Env, "MY_VAR=hi\xfe")
			}
			out, errOut, code := runCaptured(t, cmd, false)
			if code != 0 || strings.TrimSpace(out) != r.want {
				t.Fatalf("exit %d, stdout %q, want %q; stderr:\n%s", code, out, r.want, errOut)
			}
		})
	}
	// A name that is surely a mistake is a usage error naming the flag and
	// the name, one-shot and under --session alike, before any cell runs.
	for _, r := range []struct {
		name string
		args []string
		want string
	}{
		{"no name", []string{"--env", "=x"}, `--env "=x": want NAME=VALUE`},
		{"a space in the name", []string{"--env", "A B=1"}, `--env "A B=1": "A B" is not an environment variable name: it holds a space`},
		{"a space in the name, under --session", []string{"--session", "e", "--env", "A B=1"}, `--env "A B=1": "A B" is not an environment variable name`},
		{"a newline in a name passed on", []string{"--env", "A\nB"}, `--env "A\nB": "A\nB" is not an environment variable name: it holds a newline`},
	} {
		t.Run(r.name, func(t *testing.T) {
			cmd := h.cmd(append(append([]string{"run"}, r.args...), "-c", "print('ran')")...)
			out, errOut, code := runCaptured(t, cmd, false)
			if code != 2 || out != "" || !strings.Contains(errOut, r.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2, nothing run, and %q", code, out, errOut, r.want)
			}
		})
	}
}

// run --session's --env is set as the command starts, as env X=1 would
// set it: a script's later cell sees what an earlier one made of it, and
// a later command without --env keeps what the session has.
func TestRunSessionEnvSetOnce(t *testing.T) {
	h := newDaemonHome(t)
	script := filepath.Join(t.TempDir(), "s.py")
	code := "# %%\nimport os\nprint(os.environ['X'])\nos.environ['X'] = 'changed'\n# %%\nprint(os.environ['X'])\n"
	if err := os.WriteFile(script, []byte(code), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, r := range []struct {
		name string
		args []string
		want string
	}{
		{"a script's later cell sees the change", []string{"run", "--session", "once", "--env", "X=1", script}, "1\nchanged"},
		{"a later command without --env keeps it", []string{"run", "--session", "once", "-c", "import os; print(os.environ['X'])"}, "changed"},
		{"a later command with --env sets it again", []string{"run", "--session", "once", "--env", "X=3", script}, "3\nchanged"},
	} {
		t.Run(r.name, func(t *testing.T) {
			out, errOut, code := runCaptured(t, h.cmd(r.args...), false)
			if code != 0 || strings.TrimSpace(out) != r.want {
				t.Fatalf("exit %d, stdout %q, want %q; stderr:\n%s", code, out, r.want, errOut)
			}
		})
	}
}
