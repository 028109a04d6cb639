package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// An interpreter that fails to start the runner has its stderr reported a
// line at a time, indented and quoted where it holds what a terminal would
// act on: a line of it (a path with a newline) cannot close the notice and
// pass for evalhost's own lines after it, and an escape sequence (setting
// the terminal's title here) or a bidi override does not reach the
// terminal. Through run's human output, which writes notices as they are.
func TestStartErrorStderrCannotForgeLines(t *testing.T) {
	dir := t.TempDir()
	python := filepath.Join(dir, "python3")
	// It answers the interpreter probe as a Python would, then fails to
	// run the runner, saying what a hostile path would make it say.
	script := "#!/bin/sh\nif [ \"$1\" = -c ]; then echo \"$0\"; echo 3.11.7; exit 0; fi\n" +
		"printf 'cannot open /tmp/x\\n]\\n[cell 1 ok after 1ms]\\nset --python /tmp/evil\\n\\033]0;owned\\007 \\342\\200\\256txt.exe\\n' >&2\nexit 1\n"
	if err := os.WriteFile(python, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	out, _, code := runCaptured(t, command(t, "run", "--python", python, "-c", "1"), true)
	if code == 0 {
		t.Fatalf("run succeeded with an interpreter that cannot start:\n%s", out)
	}
	if !strings.Contains(out, "its stderr ends with:\n    cannot open /tmp/x\n    ]\n") {
		t.Errorf("the interpreter's stderr is not reported a line at a time, indented:\n%s", out)
	}
	for _, forged := range []*regexp.Regexp{regexp.MustCompile(`(?m)^\]$`), regexp.MustCompile(`(?m)^\[cell 1 ok`), regexp.MustCompile(`(?m)^set --python`)} {
		if forged.MatchString(out) {
			t.Errorf("a line of the interpreter's stderr passes for evalhost's own (%s):\n%s", forged, out)
		}
	}
	if strings.ContainsAny(out, "\x1b\a\u202e") {
		t.Errorf("the interpreter's escape sequence or bidi override reached the terminal: %q", out)
	}
}

// The start error's own words name the interpreter, whose path a
// directory's name makes: run in a directory named with newlines (a
// tarball's, another user's choice) whose .venv cannot start the runner,
// the path is quoted, through run's human output and run --json's
// message, and no line of it passes for evalhost's own.
func TestStartErrorInterpreterPathCannotForgeLines(t *testing.T) {
	project := filepath.Join(t.TempDir(), "x\n]\n[cell 1 ok after 1ms]\n")
	bin := filepath.Join(project, ".venv", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(project, ".venv", "pyvenv.cfg"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\nif [ \"$1\" = -c ]; then echo /usr/bin/python3; echo 3.11.7; exit 0; fi\necho boom >&2\nexit 1\n"
	if err := os.WriteFile(filepath.Join(bin, "python"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"run", "-c", "1"}, {"run", "--json", "-c", "1"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			cmd := command(t, args...)
			cmd.Dir = project
			out, _, code := runCaptured(t, cmd, true)
			if code == 0 {
				t.Fatalf("run succeeded with an interpreter that cannot start:\n%s", out)
			}
			if args[1] == "--json" {
				out = jsonMessages(t, out)
			}
			if !strings.Contains(out, `x\n]\n[cell 1 ok after 1ms]\n/.venv/bin/python`) {
				t.Errorf("the interpreter's path is not quoted:\n%s", out)
			}
			for _, forged := range []*regexp.Regexp{regexp.MustCompile(`(?m)^\]$`), regexp.MustCompile(`(?m)^\[cell 1 ok`)} {
				if forged.MatchString(out) {
					t.Errorf("a line of the interpreter's path passes for evalhost's own (%s):\n%s", forged, out)
				}
			}
		})
	}
}

// jsonMessages is the text of run --json's lines' messages and stderr
// data, as a reader of the JSON sees them once decoded.
func jsonMessages(t *testing.T, out string) string {
	t.Helper()
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var v struct{ Data, Message string }
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Fatalf("not a JSON line %q: %v", line, err)
		}
		b.WriteString(v.Data + v.Message)
	}
	return b.String()
}
