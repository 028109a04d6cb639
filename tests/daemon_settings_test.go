package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// runWithEnv runs evalhost in h with env added to its environment.
func (h *daemonHome) runWithEnv(env []string, args ...string) (stdout, stderr string, code int) {
	h.t.Helper()
	cmd := h.cmd(args...)
	cmd.Env = append(cmd.Env, env...)
	return runCaptured(h.t, cmd, false)
}

// TestDaemonSettingsDiffer: a run --session whose environment names other
// settings than those the background process started with (its artifacts
// directory, its gateway's token) got the process's silently: its spills
// went to the old directory while the user looked in the new one. It is
// told so once, naming both values (a secret's only as differing), and
// its cells still run, with the process's settings; one whose settings
// are the process's is told nothing.
func TestDaemonSettingsDiffer(t *testing.T) {
	h := newDaemonHome(t)
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	spill := []string{"run", "--session", "s", "--max-output", "100", "-c", "print('x' * 5000)"}
	_, stderr, code := h.runWithEnv([]string{"PI_ARTIFACTS_DIR=" + a}, spill...)
	if code != 0 || strings.Contains(stderr, "keeps") {
		t.Fatalf("first command: exit %d, stderr %q", code, stderr)
	}
	for _, tc := range []struct {
		name    string
		dir     string
		notice  bool
		spillIn string
	}{
		{"same directory", a, false, a},
		{"other directory", b, true, a}, // told: the spill goes to the process's
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := h.runWithEnv([]string{"PI_ARTIFACTS_DIR=" + tc.dir}, spill...)
			if code != 0 || !strings.Contains(stdout+stderr, "at "+tc.spillIn+string(os.PathSeparator)) {
				t.Errorf("exit %d, stdout %q, stderr %q; want the cell run, spilled in %s", code, stdout, stderr, tc.spillIn)
			}
			want := "PI_ARTIFACTS_DIR is " + a + " there, " + b + " here"
			if got := strings.Contains(stderr, want) && strings.Contains(stderr, `"evalhost daemon stop"`); got != tc.notice {
				t.Errorf("stderr %q: notice %q (with what to do) given %v, want %v", stderr, want, got, tc.notice)
			}
			if n := strings.Count(stderr, "keeps the settings"); n > 1 || (n == 1) != tc.notice {
				t.Errorf("stderr %q: %d settings notices", stderr, n)
			}
		})
	}
}

// TestDaemonSettingsSecret: a gateway token that differs from the
// process's is said to differ, and neither token is printed.
func TestDaemonSettingsSecret(t *testing.T) {
	h := newDaemonHome(t)
	// Never contacted: the cells are sh.
	gw := []string{"EVALHOST_BACKEND=gateway", "PI_PYTHON_GATEWAY_URL=http://127.0.0.1:9"}
	cell := []string{"run", "--session", "s", "--language", "sh", "-c", "echo ran"}
	if _, stderr, code := h.runWithEnv(append(gw, "PI_PYTHON_GATEWAY_TOKEN=first-token-value"), cell...); code != 0 {
		t.Fatalf("first command: exit %d, stderr %q", code, stderr)
	}
	stdout, stderr, code := h.runWithEnv(append(gw, "PI_PYTHON_GATEWAY_TOKEN=second-token-value"), cell...)
	if code != 0 || stdout != "ran\n" {
		t.Errorf("exit %d, stdout %q, stderr %q; want the cell run", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "PI_PYTHON_GATEWAY_TOKEN differs (its value is not shown)") {
		t.Errorf("stderr %q: no notice that the token differs", stderr)
	}
	if strings.Contains(stdout+stderr, "token-value") || strings.Contains(stderr, "sha256") {
		t.Errorf("a token is printed: stdout %q, stderr %q", stdout, stderr)
	}
}

// TestDaemonBackendFlagWinsOverEnv: --backend given to run --session wins
// over EVALHOST_BACKEND and PI_PYTHON_GATEWAY_URL, as a flag does
// elsewhere (daemon serve's): the background process a command starts
// runs that backend, and one that runs another refuses the command (exit
// 2, before any cell runs) saying how to get it. The flag was taken as
// met while the process, started from the environment, ran the cells in
// the gateway, silently; and --backend gateway was refused as if the
// process's sessions always ran in the runner.
func TestDaemonBackendFlagWinsOverEnv(t *testing.T) {
	// Never contacted by the rows that pass: their Python cells run in
	// the runner, their gateway cells are sh.
	const unreachable = "PI_PYTHON_GATEWAY_URL=http://127.0.0.1:9"
	type step struct {
		env    []string
		args   []string
		code   int
		stdout string
		stderr []string // each in stderr; none: stderr empty
	}
	py := []string{"run", "--session", "s", "-c", "print('ran')"}
	sh := []string{"run", "--session", "s", "--language", "sh", "-c", "echo ran"}
	with := func(flag string, cell []string) []string {
		return append([]string{cell[0], "--backend", flag}, cell[1:]...)
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"runner over the gateway's URL", []step{
			{env: []string{unreachable}, args: with("runner", py), stdout: "ran\n"},
			{env: []string{unreachable}, args: with("runner", py), stdout: "ran\n"},
			// The environment alone asks for the gateway: told, run in the runner.
			{env: []string{unreachable}, args: py, stdout: "ran\n",
				stderr: []string{"the Python backend (EVALHOST_BACKEND, or PI_PYTHON_GATEWAY_URL set) is runner there, gateway here", `"evalhost daemon stop"`}},
		}},
		{"runner over EVALHOST_BACKEND", []step{
			{env: []string{"EVALHOST_BACKEND=gateway", unreachable}, args: with("runner", py), stdout: "ran\n"},
		}},
		{"runner asked of a gateway process", []step{
			{env: []string{unreachable}, args: sh, stdout: "ran\n"},
			{env: []string{unreachable}, args: with("runner", py), code: 2,
				stderr: []string{"--backend runner: the background process (pid ", "runs Python cells in the gateway backend", `"evalhost daemon stop"`}},
		}},
		{"gateway given", []step{
			{args: with("gateway", sh), env: []string{unreachable}, stdout: "ran\n"},
			{args: with("gateway", sh), env: []string{unreachable}, stdout: "ran\n"},
		}},
		{"unknown backend", []step{
			{args: with("kernel", py), code: 2, stderr: []string{`evalhost run: unknown backend "kernel"`}},
		}},
		{"gateway asked of a runner process", []step{
			{args: py, stdout: "ran\n"},
			{env: []string{unreachable}, args: with("gateway", sh), code: 2,
				stderr: []string{"--backend gateway: the background process (pid ", "runs Python cells in the runner backend", `"evalhost daemon stop"`}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newDaemonHome(t)
			for i, s := range tc.steps {
				stdout, stderr, code := h.runWithEnv(s.env, s.args...)
				ok := code == s.code && stdout == s.stdout && (len(s.stderr) > 0 || stderr == "")
				for _, w := range s.stderr {
					ok = ok && strings.Contains(stderr, w)
				}
				if !ok {
					t.Fatalf("step %d, %v with %v: exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr with %q",
						i, s.args, s.env, code, stdout, stderr, s.code, s.stdout, s.stderr)
				}
			}
		})
	}
}
