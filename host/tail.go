package host

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// tailSize bounds the stderr tail kept for start and death errors.
const tailSize = 8 << 10

// tailRing keeps the last tailSize bytes written to it. It is written by the
// pump and read by error paths, hence the mutex.
type tailRing struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailRing) Write(p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(p) >= tailSize {
		t.buf = append(t.buf[:0], p[len(p)-tailSize:]...)
		return
	}
	if over := len(t.buf) + len(p) - tailSize; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	t.buf = append(t.buf, p...)
}

// String returns the tail as valid UTF-8, starting at a line boundary when
// the ring has wrapped, trimmed of surrounding blank space.
func (t *tailRing) String() string {
	t.mu.Lock()
	b := append([]byte(nil), t.buf...)
	t.mu.Unlock()
	if len(b) == tailSize {
		if i := strings.IndexByte(string(b), '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	s := string(b)
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	return strings.TrimSpace(s)
}
