package sessions

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/streamsink"
)

// jobWindow is how much of a job's output is at least held in memory (at
// most twice it) for readers that poll by offset. Older output is only in
// the job's artifact.
const jobWindow = 1 << 20

// jobLog is the sanitised text of a detached cell from its first frame, as
// one stream addressed by byte offset. It keeps the last jobWindow bytes;
// offsets never move, so a reader that polls with the offset it was given
// sees every byte once, and learns how many it missed when it falls behind.
type jobLog struct {
	mu    sync.Mutex
	buf   []byte
	start int64 // offset of buf[0]
}

// frame records the text a frame shows, as the sink records it: stream
// text as it comes, a traceback or display text as lines of their own.
func (l *jobLog) frame(f frames.Frame) {
	var text string
	block := true
	switch f.Type {
	case frames.TypeStdout, frames.TypeStderr:
		text, block = f.Data, false
	case frames.TypeError:
		text = f.ErrorText()
	case frames.TypeDisplay, frames.TypeResult:
		text = streamsink.DisplayText(f.Bundle)
	}
	if text == "" {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if block && len(l.buf) > 0 && l.buf[len(l.buf)-1] != '\n' {
		l.buf = append(l.buf, '\n')
	}
	l.buf = append(l.buf, text...)
	if block && !strings.HasSuffix(text, "\n") {
		l.buf = append(l.buf, '\n')
	}
	if len(l.buf) > 2*jobWindow {
		// Cut back to the window only when twice over it, so a job printing
		// short lines fast does not move a window's bytes for each line;
		// cut on a character boundary so every offset handed out starts one.
		over := len(l.buf) - jobWindow
		for over < len(l.buf) && !utf8.RuneStart(l.buf[over]) {
			over++
		}
		l.start += int64(over)
		l.buf = append(l.buf[:0], l.buf[over:]...)
	}
}

// drop lets go of the held output: later reads find it all elided.
func (l *jobLog) drop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.start += int64(len(l.buf))
	l.buf = nil
}

func (l *jobLog) total() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.start + int64(len(l.buf))
}

// jobPage is one read of a job's output.
type jobPage struct {
	Text   string
	Offset int64 // where Text starts: the asked offset, or later by Elided
	Next   int64 // the offset to read from next
	Total  int64 // bytes of output so far
	Elided int64 // bytes after the asked offset no longer held in memory
	More   bool  // output after Next is already there: read again
}

// read returns the output from offset on, at most maxBytes and maxLines of
// it, cut after a newline when it has to be cut (or on a character boundary
// for a line longer than maxBytes). An offset past the end is an error: a
// reader that passes back what it was given never meets it.
func (l *jobLog) read(offset int64, maxBytes, maxLines int) (jobPage, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	total := l.start + int64(len(l.buf))
	if offset < 0 || offset > total {
		return jobPage{}, fmt.Errorf("%w: offset %d is outside the job's output (0..%d bytes); pass the offset a reply gave as next, or 0",
			ErrBadRequest, offset, total)
	}
	p := jobPage{Offset: offset, Total: total}
	if offset < l.start {
		p.Elided, p.Offset = l.start-offset, l.start
	}
	rest := l.buf[p.Offset-l.start:]
	for len(rest) > 0 && !utf8.RuneStart(rest[0]) {
		// An offset the log never handed out: start at the next character.
		rest = rest[1:]
		p.Offset++
	}
	n := min(len(rest), maxBytes)
	if lines := 0; maxLines > 0 {
		for i, b := range rest[:n] {
			if b == '\n' {
				if lines++; lines == maxLines {
					n = i + 1
					break
				}
			}
		}
	}
	if n < len(rest) {
		if nl := bytes.LastIndexByte(rest[:n], '\n'); nl >= 0 {
			n = nl + 1
		} else {
			for n > 0 && !utf8.RuneStart(rest[n]) {
				n--
			}
			if n == 0 {
				// Always progress: a reader passing Next back must not
				// stall on a character wider than the bound.
				_, n = utf8.DecodeRune(rest)
			}
		}
		p.More = true
	}
	p.Text = string(rest[:n])
	p.Next = p.Offset + int64(n)
	return p, nil
}
