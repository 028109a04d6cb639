package shell

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// shellHoldRun feeds chunks to cell 1 of a shell whose last cell left
// strays interrupts behind, as Execute would, and returns the text the
// cell passed on and whether its end marker was seen.
func shellHoldRun(strays int, chunks ...string) (text string, ended bool) {
	s := &Shell{scan: newShellScanner(shellTestNonce)}
	var b strings.Builder
	c := shellCell{s: s, id: "c1", n: 1, strays: strays,
		emit: func(f frames.Frame) { b.WriteString(f.Data) }}
	for _, ch := range chunks {
		if _, found := c.feed([]byte(ch)); found {
			return b.String(), true
		}
	}
	return b.String(), false
}

func shellMark(payload string) string { return "\x1eEVH" + shellTestNonce + ":" + payload + "\x1e\n" }

// What came before a cell's sync marker loses one empty line per interrupt
// that may have reached bash at its prompt, and nothing else.
func TestShellHoldBeforeSync(t *testing.T) {
	sync, end := shellMark("S:1"), shellMark("1:0")
	tests := []struct {
		name   string
		strays int
		chunks []string
		want   string
	}{
		{"no interrupt keeps blank lines", 0, []string{"\r\n\r\n", end}, "\r\n\r\n"},
		{"bash's newline", 1, []string{"\r\n", sync, "mine\r\n", end}, "mine\r\n"},
		{"bash's ^C and newline", 1, []string{"^C\r\n", sync, "mine\r\n", end}, "mine\r\n"},
		{"a background job's blank lines after bash's", 1,
			[]string{"\r\n", "\r\n\r\n", sync, "mine\r\n", end}, "\r\n\r\nmine\r\n"},
		{"three interrupts, two newlines", 3, []string{"\r\n\r\n", sync, end}, ""},
		// After a job's text nothing is dropped: which was bash's cannot be
		// told, and losing the job's blank line would lose output.
		{"bash's newline after a job's line", 1,
			[]string{"late\r\n", "\r\n", sync, "mine\r\n", end}, "late\r\n\r\nmine\r\n"},
		{"a job's blank line between its lines", 1, []string{"a\n\nb\n", sync, end}, "a\n\nb\n"},
		{"a marker cut by an interrupt, reprinted whole", 3,
			[]string{"\n\x1e\n", shellMark("7:130"), "\n", sync, "mine\n", end}, "mine\n"},
		{"a cut marker across reads", 1, []string{"\x1eEV", "H", "\n", sync, end}, ""},
		{"a record separator that is a job's", 1, []string{"\x1ex\n", sync, end}, "\x1ex\n"},
		{"bash's newline before a job's line", 1,
			[]string{"\r\n", "late\r\n", sync, "mine\r\n", end}, "late\r\nmine\r\n"},
		{"a line's own break is kept", 1,
			[]string{"late", "\r\n", sync, end}, "late\r\n"},
		{"cut in the middle of ^C and its break", 1,
			[]string{"^", "C\r", "\n", "x\r\n", sync, end}, "x\r\n"},
		{"a caret that is not ^C", 1, []string{"^", "x\r\n", sync, end}, "^x\r\n"},
		{"held start released by the sync", 1, []string{"\r\r", sync, end}, "\r\r"},
		{"held start released by the end marker", 1, []string{"^C", end}, "^C"},
		{"after the sync nothing is dropped", 1, []string{sync, "\r\n\r\n", end}, "\r\n\r\n"},
		{"carriage returns past any terminal's", 1,
			[]string{strings.Repeat("\r", 100), "\n", sync, end}, strings.Repeat("\r", 100) + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ended := shellHoldRun(tt.strays, tt.chunks...)
			if !ended || got != tt.want {
				t.Errorf("text %q (ended %v), want %q", got, ended, tt.want)
			}
		})
	}
}

// However the pty cuts its output, the same text comes out, and only the
// empty lines (or cut markers) that open it are lost, at most one per
// interrupt.
func FuzzShellHold(f *testing.F) {
	f.Add([]byte("\r\nlate\r\n\r\n^C\r\n"), 2, 3, 1)
	f.Add([]byte("^C^C\r\r\n"), 1, 4, 2)
	f.Add([]byte("\n\x1eEV\n\x1e\n\nx"), 3, 5, 3)
	prefix := "\x1eEVH" + shellTestNonce + ":"
	var starts []string
	for i := len(prefix) - 1; i > 0; i-- {
		starts = append(starts, regexp.QuoteMeta(prefix[:i]))
	}
	lost := regexp.MustCompile("^((\\^C)?(" + strings.Join(starts, "|") + ")?\r*\n)*$")
	f.Fuzz(func(t *testing.T, in []byte, c1, c2, strays int) {
		if bytes.Contains(in, []byte(prefix)) || strays < 0 || strays > 8 {
			return // a whole marker prefix is the scanner's business
		}
		whole, _ := shellHoldRun(strays, string(in), shellMark("1:0"))
		var chunks []string
		prev := 0
		for _, c := range []int{c1, c2} {
			if c > prev && c < len(in) {
				chunks = append(chunks, string(in[prev:c]))
				prev = c
			}
		}
		chunks = append(chunks, string(in[prev:]), shellMark("1:0"))
		cut, _ := shellHoldRun(strays, chunks...)
		if cut != whole {
			t.Fatalf("cut at %d,%d: %q, whole: %q", c1, c2, cut, whole)
		}
		if !strings.HasSuffix(string(in), whole) {
			t.Fatalf("%q is not what is left of %q", whole, in)
		}
		removed := string(in)[:len(in)-len(whole)]
		if !lost.MatchString(removed) || strings.Count(removed, "\n") > strays {
			t.Fatalf("%q dropped from %q with %d interrupts", removed, in, strays)
		}
	})
}
