package notebook

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func encodeOutput(o Output) string {
	e := encoder{indent: " ", newline: "\n"}
	e.value(o.v, 0)
	return string(e.buf)
}

// StreamText written in any pieces is StreamOutput of their concatenation:
// line breaks cut between "\r" and "\n" or inside a multi-byte separator
// (U+2028, U+0085), invalid UTF-8, and an output taken midway.
func TestStreamTextIsStreamOutput(t *testing.T) {
	alphabet := []string{"a", "bc", "\n", "\r", "\r\n", "\v", "\x1c", "\u2028", "\u0085", "\u00e9", "\xff", "\xe2\x80", "\"", "\\", "\t", "\x00", "日本"}
	r := rand.New(rand.NewPCG(1, 2))
	for run := range 2000 {
		var whole strings.Builder
		for range r.IntN(30) {
			whole.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		text := whole.String()
		s := NewStreamText("stdout")
		for rest := text; ; {
			if r.IntN(4) == 0 {
				done := len(text) - len(rest)
				if got, want := encodeOutput(s.Output()), encodeOutput(StreamOutput("stdout", text[:done])); got != want {
					t.Fatalf("run %d: midway output of %q after %q:\n got %s\nwant %s", run, text, text[:done], got, want)
				}
			}
			if rest == "" {
				break
			}
			n := 1 + r.IntN(len(rest))
			s.Write(rest[:n])
			rest = rest[n:]
		}
		if got, want := encodeOutput(s.Output()), encodeOutput(StreamOutput("stdout", text)); got != want {
			t.Fatalf("run %d: output of %q:\n got %s\nwant %s", run, text, got, want)
		}
	}
}

// A long line's buffer is let go once the line ends, and text written
// after an Output does not change it.
func TestStreamTextKeepsOutputs(t *testing.T) {
	s := NewStreamText("stderr")
	s.Write(strings.Repeat("x", 20<<20))
	before := s.Output()
	s.Write("\nshort")
	if cap(s.tail) > 16<<20 {
		t.Errorf("tail keeps %d bytes of capacity after its long line ended", cap(s.tail))
	}
	s.Write(" more\n")
	if got := before.Text(); got != strings.Repeat("x", 20<<20) {
		t.Errorf("an earlier Output changed: %d bytes", len(got))
	}
	if got, want := s.Output().Text(), strings.Repeat("x", 20<<20)+"\nshort more\n"; got != want {
		t.Errorf("Text = %d bytes, want %d", len(got), len(want))
	}
}
