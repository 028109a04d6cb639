package main

import (
	"encoding/json"
	"io"
	"sync"

	"github.com/evalhost/evalhost/frames"
)

// lineWriter writes whole NDJSON lines from many goroutines: each line is
// built first and written with one call under the lock, so lines of
// concurrent requests interleave but never mix.
type lineWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

func (lw *lineWriter) frame(cell int, f *frames.Frame) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.buf = appendTagged(lw.buf[:0], cell, f)
	lw.buf = append(lw.buf, '\n')
	lw.w.Write(lw.buf)
}

func (lw *lineWriter) object(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]string{"type": "request_error", "error": "cannot encode a reply: " + err.Error()})
	}
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.w.Write(append(b, '\n'))
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// quoteLine is the prefix of a bad line that an error quotes.
func quoteLine(line []byte) string {
	const limit = 200
	if len(line) > limit {
		return string(line[:limit])
	}
	return string(line)
}
