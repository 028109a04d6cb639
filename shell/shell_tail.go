package shell

import (
	"strings"
	"unicode/utf8"
)

// shellTailSize bounds the output tail kept for start and death errors.
const shellTailSize = 4 << 10

// shellTail keeps the last shellTailSize bytes of the shell's output. Only
// the goroutine that owns the cell (or Start) writes and reads it.
type shellTail struct{ buf []byte }

func (t *shellTail) Write(p []byte) {
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - shellTailSize; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
}

// String returns the tail as trimmed, valid UTF-8.
func (t *shellTail) String() string {
	return strings.TrimSpace(strings.ToValidUTF8(string(t.buf), string(utf8.RuneError)))
}
