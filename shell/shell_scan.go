package shell

import (
	"bytes"
	"unicode/utf8"
)

// shellMarkMax bounds a marker's payload (after the prefix, before the
// terminator). A prefix followed by more than this without a terminator is
// not a marker, so the bytes held back stay bounded whatever a cell prints.
const shellMarkMax = 96

// shellMarkEnd terminates a marker. The shell prints markers with printf, so
// the pty's output processing (ONLCR is off) leaves the newline alone.
const shellMarkEnd = "\x1e\n"

// shellScanner splits the pty's output into text and end-of-cell markers
// ("\x1eEVH" + nonce + ":" + payload + "\x1e\n"). Unlike a push scanner it
// is pulled one event at a time, so the caller can stop at its cell's marker
// and leave what follows buffered for the next cell. A trailing partial
// marker and an incomplete trailing UTF-8 sequence are held back until more
// input arrives, so text never splits a rune across two frames.
type shellScanner struct {
	prefix  []byte
	buf     []byte
	dropped int // bytes of markers cut short, dropped
}

func newShellScanner(nonce string) *shellScanner {
	return &shellScanner{prefix: []byte("\x1eEVH" + nonce + ":")}
}

// Write appends pty output to the scanner. The scanner may keep p and
// return parts of it from Next, so the caller must not reuse it.
func (s *shellScanner) Write(p []byte) {
	if len(s.buf) == 0 {
		s.buf = p // the common case: nothing held back, no copy
		return
	}
	s.buf = append(s.buf[:len(s.buf):len(s.buf)], p...)
}

// Next returns the next complete event: text, or a marker payload with
// isMark set. ok is false when more input is needed. Text aliases what was
// written.
func (s *shellScanner) Next() (text []byte, payload string, isMark, ok bool) {
	if len(s.buf) == 0 {
		return nil, "", false, false
	}
	j := bytes.Index(s.buf, s.prefix)
	switch {
	case j > 0:
		return s.take(j), "", false, true
	case j == 0:
		rest := s.buf[len(s.prefix):]
		window := rest[:min(len(rest), shellMarkMax+len(shellMarkEnd))]
		k := bytes.IndexAny(window, "\x1e\n") // a payload holds neither
		switch {
		case k < 0 && len(rest) < shellMarkMax+len(shellMarkEnd), k == len(rest)-1 && rest[k] == '\x1e':
			return nil, "", false, false
		case k < 0:
			// Not a marker after all: pass the prefix through as text.
			return s.take(len(s.prefix)), "", false, true
		case bytes.HasPrefix(rest[k:], []byte(shellMarkEnd)):
			payload = string(rest[:k])
			s.buf = s.buf[len(s.prefix)+k+len(shellMarkEnd):]
			return nil, payload, true, true
		}
		// A marker cut short: a SIGINT stopped bash's printf partway. Its
		// start is dropped (it is no one's output, and holds the nonce),
		// and what follows, often the next marker, is scanned again.
		if rest[k] == '\x1e' && !bytes.HasPrefix(rest[k:], s.prefix) {
			if bytes.HasPrefix(s.prefix, rest[k:]) {
				return nil, "", false, false // a marker may begin there: wait
			}
			k++ // its lone terminator byte goes with it; the start of a marker does not
		}
		s.dropped += len(s.prefix) + k
		s.buf = s.buf[len(s.prefix)+k:]
		return s.Next()
	}
	keep := shellPartialPrefix(s.buf, s.prefix)
	if keep == 0 {
		keep = shellIncompleteRune(s.buf)
	}
	if keep == len(s.buf) {
		return nil, "", false, false
	}
	return s.take(len(s.buf) - keep), "", false, true
}

// Rest returns everything still buffered, as text; for when no more input
// will come.
func (s *shellScanner) Rest() []byte {
	return s.take(len(s.buf))
}

// take consumes n bytes. The result aliases memory the scanner no longer
// writes to (Write never appends in place), so it stays valid.
func (s *shellScanner) take(n int) []byte {
	out := s.buf[:n:n]
	s.buf = s.buf[n:]
	return out
}

// shellPartialPrefix is the length of the longest suffix of data that is a
// proper prefix of prefix.
func shellPartialPrefix(data, prefix []byte) int {
	for n := min(len(data), len(prefix)-1); n > 0; n-- {
		if bytes.Equal(data[len(data)-n:], prefix[:n]) {
			return n
		}
	}
	return 0
}

// shellIncompleteRune is the length of an incomplete UTF-8 sequence at the
// end of b (0 when b ends on a rune boundary or with invalid bytes).
func shellIncompleteRune(b []byte) int {
	for n := 1; n <= min(len(b), utf8.UTFMax-1); n++ {
		c := b[len(b)-n]
		if c < 0x80 {
			return 0
		}
		if utf8.RuneStart(c) {
			if utf8.FullRune(b[len(b)-n:]) {
				return 0
			}
			return n
		}
	}
	return 0
}
