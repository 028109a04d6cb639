package streamsink

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// tailState is what a Dump reads of a tail.
func tailState(t *tail) string {
	return fmt.Sprintf("%q lines %d total %d dropped %d/%d headCut %d cr %v partial %v", t.visible(),
		t.lines, t.totalNL, t.droppedBytes, t.droppedLines, t.headCut, t.cr, t.partial)
}

// checkTailWriter writes before, then text, to two tails: one takes the
// text whole, the other through a tailWriter in pieces of step bytes.
func checkTailWriter(t *testing.T, before, text []byte, maxBytes, maxLines, step int) {
	t.Helper()
	defer func(old int) { minRun = old }(minRun)
	minRun = 0
	whole := tail{maxBytes: maxBytes, maxLines: maxLines}
	parts := whole
	whole.write(before)
	parts.write(before)
	whole.write(text)
	w := tailWriter{t: &parts}
	for i := 0; i < len(text); i += step {
		w.write(text[i:min(i+step, len(text))])
	}
	w.close()
	if got, want := tailState(&parts), tailState(&whole); got != want {
		t.Fatalf("%q then %q in pieces of %d (tail %d bytes, %d lines):\n got %q\nwant %q",
			before, text, step, maxBytes, maxLines, got, want)
	}
}

func TestTailWriter(t *testing.T) {
	tests := []struct {
		name, before, text string
		maxBytes, maxLines int
	}{
		{"long line cut, then a line", "", "\uFFFD0\n0", 4, 2}, // whole drops "0\n"; pieces as they came kept it
		{"long line", "a\n", strings.Repeat("x", 50), 8, 3},
		{"long line ends the text", "a\n", strings.Repeat("x", 30) + "\n", 8, 3},
		{"lines", "part", strings.Repeat("line\n", 40), 16, 3},
		{"progress", "a\n", strings.Repeat("12%\r", 20) + "100%\n", 6, 2},
		{"progress after a partial line", "50%\r", "60%\rdone", 6, 2},
		{"runes", "", strings.Repeat("€é😀\n", 20), 9, 4},
		{"crlf", "x", "a\r\nb\r\n" + strings.Repeat("c", 20), 5, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for step := 1; step <= len(tc.text); step++ {
				checkTailWriter(t, []byte(tc.before), []byte(tc.text), tc.maxBytes, tc.maxLines, step)
			}
		})
	}
}

func FuzzTailWriter(f *testing.F) {
	f.Add([]byte("ab\n"), []byte("a\nbb\rcc\r\n€€\n\nlong line here"), uint8(5), uint8(2), uint8(3))
	f.Add([]byte("x\r"), bytes.Repeat([]byte("xyz\r"), 20), uint8(7), uint8(1), uint8(4))
	f.Fuzz(func(t *testing.T, before, text []byte, maxBytes, maxLines, step uint8) {
		b := []byte(Sanitize(string(before))) // what a tail is given
		p := []byte(Sanitize(string(text)))
		checkTailWriter(t, b, p, 4+int(maxBytes%64), 1+int(maxLines%8), 1+int(step%16))
	})
}
