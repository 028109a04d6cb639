package main

import (
	"io"
	"sync"

	"github.com/evalhost/evalhost/frames"
)

// lineWriter writes whole NDJSON lines from many goroutines: each line is
// built first and written under the lock, so lines of concurrent requests
// interleave but never mix.
//
// A line that is always followed at once by another of the same request
// (a cell's result, error and done come right before its cell_end; the last
// cell_end right before end) may be held and written together with the
// next line: one write and one client wake-up instead of several, which is
// most of a short request's cost on a small machine. Nothing is ever held
// past the next line written.
type lineWriter struct {
	mu   sync.Mutex
	w    io.Writer
	buf  []byte
	held []byte
}

func (lw *lineWriter) frame(cell int, f *frames.Frame) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.buf = appendTagged(lw.buf[:0], cell, f)
	lw.buf = append(lw.buf, '\n')
	lw.writeLocked(lw.buf, heldFrame(f.Type))
}

// heldFrame reports the frames a cell ends with.
func heldFrame(t frames.Type) bool {
	return t == frames.TypeDone || t == frames.TypeResult || t == frames.TypeError
}

func (lw *lineWriter) object(v any) { lw.objectHeld(v, false) }

// objectHeld writes v, holding it for the next line when hold is set.
func (lw *lineWriter) objectHeld(v any, hold bool) {
	line := jsonLine(v, "request_error", "cannot encode a reply: ")
	lw.mu.Lock()
	defer lw.mu.Unlock()
	lw.writeLocked(line, hold)
}

func (lw *lineWriter) writeLocked(line []byte, hold bool) {
	if hold {
		lw.held = append(lw.held, line...)
		return
	}
	if len(lw.held) > 0 {
		lw.held = append(lw.held, line...)
		lw.w.Write(lw.held)
		lw.held = lw.held[:0]
		return
	}
	lw.w.Write(line)
}

// quoteLine is the prefix of a bad line that an error quotes.
func quoteLine(line []byte) string {
	const limit = 200
	if len(line) > limit {
		return string(line[:limit])
	}
	return string(line)
}
