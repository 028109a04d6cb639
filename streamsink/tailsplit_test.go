package streamsink

import (
	"fmt"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// streamDump writes chunks to a new sink's stdout and returns its dump,
// the artifact's path aside (each sink has its own).
func streamDump(t *testing.T, o Options, chunks ...[]byte) string {
	t.Helper()
	s := newSink(t, o)
	for _, c := range chunks {
		s.Write(frames.TypeStdout, c)
	}
	d := closeDump(t, s)
	d.ArtifactPath = ""
	return fmt.Sprintf("%+v", d)
}

// checkSplitFree wants the dump of text written as one write from every
// split of it into two writes, and from a write per byte.
func checkSplitFree(t *testing.T, o Options, text []byte) {
	t.Helper()
	want := streamDump(t, o, text)
	for cut := 1; cut < len(text); cut++ {
		if got := streamDump(t, o, text[:cut], text[cut:]); got != want {
			t.Fatalf("%q written as %q and %q:\n got %s\nwant %s", text, text[:cut], text[cut:], got, want)
		}
	}
	bytes := make([][]byte, len(text))
	for i := range text {
		bytes[i] = text[i : i+1]
	}
	if got := streamDump(t, o, bytes...); got != want {
		t.Fatalf("%q written a byte at a time:\n got %s\nwant %s", text, got, want)
	}
}

// A stream's tail is the same however its bytes were split into writes
// (as pipe reads split them): a long line cut at its head is dropped once
// a line follows it, also when what follows still fits beside it (a cut
// on a rune boundary leaves the tail a few bytes short).
func TestTailOfAStreamIsSplitFree(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  Options
		text string
	}{
		{"long line of 4-byte runes, then a short one", Options{MaxBytes: 10}, strings.Repeat("😀", 4) + "\nx"},
		{"long line of 3-byte runes, then lines", Options{MaxBytes: 8, MaxLines: 2}, strings.Repeat("€", 5) + "\n\n"},
		{"long line, then a short one", Options{MaxBytes: 10}, strings.Repeat("z", 30) + "\nok\n"},
		{"long line ends the text", Options{MaxBytes: 10}, "a\n" + strings.Repeat("z", 30) + "\n"},
		{"progress over a long line", Options{MaxBytes: 10}, strings.Repeat("😀", 4) + "\r\nx\r50%\r100%"},
		{"lines", Options{MaxBytes: 12, MaxLines: 3}, "1\n22\n333\n4444\n55555\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkSplitFree(t, tc.opt, []byte(tc.text))
		})
	}
}

func FuzzTailOfAStream(f *testing.F) {
	f.Add([]byte("😀😀😀😀\nx"), uint8(6), uint8(3))
	f.Add([]byte("ab\r\ncd\x1b[1mef\nghi"), uint8(0), uint8(1))
	f.Fuzz(func(t *testing.T, text []byte, maxBytes, maxLines uint8) {
		if len(text) > 64 {
			text = text[:64]
		}
		checkSplitFree(t, Options{MaxBytes: 4 + int(maxBytes%32), MaxLines: 1 + int(maxLines%6), MaxColumns: 1000}, text)
	})
}
