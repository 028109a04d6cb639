package tests

import (
	"path/filepath"
	"strings"
	"testing"
)

// A session's name is the user's text, shown back in tables and notices.
// One with control characters (an escape sequence, a newline) is shown
// quoted, as evalhost shows such paths (trustdir.Shown): printed raw it
// drove the terminal and broke the table's rows. One that is not UTF-8 is
// refused: the process's JSON made it U+FFFD, so "a\xff" and "a\xfe" were
// one session.
func TestDaemonSessionNamesShown(t *testing.T) {
	h := newDaemonHome(t)
	name := "e\x1b[31mred\nline"
	shown := `"e\x1b[31mred\nline"`
	flag := filepath.Join(h.home, "flag")
	type step struct {
		name   string
		args   []string
		code   int
		stdout string // a part of it
		stderr string // a part of it
	}
	steps := []step{
		{"run", []string{"run", "--session", name, "-c", "x = 1"}, 0, "", ""},
		{"a job in it", []string{"run", "--session", name, "--timeout", "1", "--detach", "-c", waitForFlag(flag)}, 0, "", "goes on in session " + shown},
		{"sessions", []string{"sessions"}, 0, shown, ""},
		{"jobs", []string{"jobs"}, 0, shown, ""},
		{"jobs job-1", []string{"jobs", "job-1"}, 0, "", "job-1 in session " + shown},
		{"busy", []string{"run", "--session", name, "-c", "1"}, 1, "", ""},
		{"kill", []string{"kill", name}, 0, "ended session " + shown, ""},
		{"state again", []string{"run", "--session", name, "-c", "x = 1"}, 0, "", ""},
		{"the next cell after a stop", []string{"run", "--session", name, "-c", "x = 1"}, 0, "", ""},
		{"not UTF-8", []string{"run", "--session", "a\xff", "-c", "1"}, 2, "", "is not UTF-8"},
		{"kill, not UTF-8", []string{"kill", "a\xff"}, 2, "", "is not UTF-8"},
	}
	// A blank name and one with a space are quoted in the tables: a blank
	// column, or "a b" read as two columns, named no session.
	steps = append(steps,
		step{"run, a blank name", []string{"run", "--session", " ", "-c", "x = 1"}, 0, "", ""},
		step{"run, a spaced name", []string{"run", "--session", "a b", "-c", "x = 1"}, 0, "", ""},
		step{"sessions, the blank name", []string{"sessions"}, 0, "\n\" \"  ", ""},
		step{"sessions, the spaced name", []string{"sessions"}, 0, "\n\"a b\"  ", ""})
	for _, s := range steps {
		if s.name == "the next cell after a stop" {
			if _, stderr, code := h.run("daemon", "stop"); code != 0 {
				t.Fatal(stderr)
			}
			s.stderr = "[state lost: session " + shown + "'s py interpreter"
		}
		out, errOut, code := h.run(s.args...)
		if code != s.code || !strings.Contains(out, s.stdout) || !strings.Contains(errOut, s.stderr) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit %d, stdout with %q, stderr with %q", s.name, code, out, errOut, s.code, s.stdout, s.stderr)
		}
		if strings.Contains(out+errOut, "\x1b") || strings.Contains(out+errOut, "red\nline") {
			t.Errorf("%s: the name reached the terminal raw: stdout %q, stderr %q", s.name, out, errOut)
		}
	}
}
