package tests

import (
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
