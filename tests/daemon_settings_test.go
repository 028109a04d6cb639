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
