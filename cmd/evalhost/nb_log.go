package main

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
)

// outputLog is nb run --log-output: as papermill logs a run, an
// "Executing Cell N---" line when a cell starts (its first frame; N is
// its 1-based notebook position), its stream output and the text/plain of
// its displays and results as they come, and "Ending Cell N---" when it
// ends; a cell that never started gets neither.
// The notebook keeps the output as the cell wrote it; the log, read on a
// terminal, gets it sanitised (no escape sequences, which could set the
// terminal's title or clipboard), as evalhost shows output elsewhere.
type outputLog struct {
	mu   sync.Mutex
	w    io.Writer
	last int              // notebook index of the cell being logged, -1 before the first
	san  *streamsink.Sink // the cell's streams, sanitised across chunks
}

func (l *outputLog) frame(cell int, fr frames.Frame) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.start(cell)
	switch fr.Type {
	case frames.TypeStdout, frames.TypeStderr:
		if text := l.san.Write(fr.Type, []byte(fr.Data)); text != "" || fr.Data == "" {
			l.line(text)
		}
	case frames.TypeDisplay, frames.TypeResult, frames.TypeUpdateDisplay:
		if text, ok := fr.Bundle.Text("text/plain"); ok {
			l.line(streamsink.Sanitize(text))
		}
	}
}

func (l *outputLog) start(cell int) {
	if cell != l.last {
		l.last = cell
		// Only sanitised and counted: nothing is kept on disk.
		l.san, _ = streamsink.New(streamsink.Options{NoSpill: true})
		l.line(fmt.Sprintf("Executing Cell %s", padDashes(cell+1, 40)))
	}
}

// flush logs what the cell's streams held back (half a rune at the end).
func (l *outputLog) flush() {
	for _, t := range []frames.Type{frames.TypeStdout, frames.TypeStderr} {
		if text := l.san.Flush(t); text != "" {
			l.line(text)
		}
	}
}

// cellEnd logs a cell's end, then calls next. A cell that never started
// (skipped, or cancelled before it started) had no frame, so no Executing
// line: it gets no Ending line either, as papermill logs neither for a
// cell it never ran.
func (l *outputLog) cellEnd(next func(int, sessions.CellResult)) func(int, sessions.CellResult) {
	return func(cell int, res sessions.CellResult) {
		l.mu.Lock()
		if cell == l.last {
			l.flush()
			l.line(fmt.Sprintf("Ending Cell %s", padDashes(cell+1, 43)))
		}
		l.mu.Unlock()
		if next != nil {
			next(cell, res)
		}
	}
}

// line writes text as Python's logging does: one message, one newline. The
// log is a side channel: once its reader is gone (| head, a dropped ssh),
// it is dropped and the run goes on, as papermill's does.
func (l *outputLog) line(text string) {
	if _, err := io.WriteString(l.w, text+"\n"); err != nil {
		l.w = io.Discard
	}
}

// padDashes is Python's f"{n:-<width}".
func padDashes(n, width int) string {
	s := fmt.Sprint(n)
	return s + strings.Repeat("-", max(0, width-len(s)))
}
