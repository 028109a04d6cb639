package tests

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/internal/testkit"
)

// shutil.get_terminal_size reads COLUMNS and LINES as python3's int() does
// and asks the terminal for the ones that are not a number above 0: a
// cell's answer is python3's, at a terminal (100x30) or on pipes, one-shot
// and under --session (a session started by the command), whatever the
// variables hold.
func TestRunTerminalSizeAsPython(t *testing.T) {
	const code = "import shutil; print(*shutil.get_terminal_size())"
	h := newDaemonHome(t)
	python := testkit.Python(t)
	for i, tc := range []struct {
		name string
		env  []string
	}{
		{"unset", nil},
		{"COLUMNS a number", []string{"COLUMNS=61"}},
		{"COLUMNS not a number", []string{"COLUMNS=abc"}},
		{"COLUMNS empty", []string{"COLUMNS="}},
		{"COLUMNS 0", []string{"COLUMNS=0"}},
		{"COLUMNS negative", []string{"COLUMNS=-3"}},
		{"COLUMNS as int() reads it", []string{"COLUMNS= +7_0 "}},
		{"COLUMNS a float", []string{"COLUMNS=70.0"}},
		{"LINES not a number", []string{"LINES=x"}},
		{"both not numbers", []string{"COLUMNS=abc", "LINES=12x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := func(cmd *exec.Cmd) *exec.Cmd {
				cmd.Env = append(withoutVars(cmd.Environ(), "COLUMNS", "LINES"), tc.env...)
				return cmd
			}
			for _, where := range []struct {
				name string
				show func(*exec.Cmd) string
			}{
				{"terminal", func(cmd *exec.Cmd) string { s, _ := cmdInTerminal(t, cmd); return s }},
				{"pipe", func(cmd *exec.Cmd) string { out, _, _ := runCaptured(t, cmd, false); return strings.TrimSpace(out) }},
			} {
				want := where.show(env(exec.Command(python, "-c", code)))
				// A session of its own: a running one keeps the COLUMNS and
				// LINES it started with where no terminal is shown.
				session := fmt.Sprintf("size%d-%s", i, where.name)
				for _, args := range [][]string{{"run", "-c", code}, {"run", "--session", session, "-c", code}} {
					if got := where.show(env(h.cmd(args...))); got != want {
						t.Errorf("%s, %s: evalhost showed %q, python3 %q", where.name, strings.Join(args[:len(args)-2], " "), got, want)
					}
				}
			}
		})
	}
}

// withoutVars is env without the names given.
func withoutVars(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, name) {
			out = append(out, kv)
		}
	}
	return out
}
