package streamsink

import (
	"strings"

	"github.com/evalhost/evalhost/frames"
)

// Frame passes a frame through the sink and returns the frame to forward:
//
//   - stdout, stderr: Data sanitised and recorded, as [Sink.Write];
//   - error: traceback lines and evalue sanitised; the traceback (or
//     "ename: evalue" when it is empty) recorded as lines of their own;
//   - display, update_display, result: payloads above Options.InlineLimit
//     moved to the store (see [MetadataKey]); text/plain and text/markdown
//     sanitised; the text a renderer shows ([frames.Bundle.DisplayMIME]:
//     text/markdown, else text/plain, else, when neither is a string or
//     the one there is empty, the text of text/html, sanitised, or a line
//     "[text/html 1.2 MiB]" for HTML above the inline limit) recorded as
//     lines of their own;
//   - anything else: unchanged.
//
// The caller's maps and slices are never modified.
func (s *Sink) Frame(f frames.Frame) frames.Frame {
	switch f.Type {
	case frames.TypeStdout, frames.TypeStderr:
		f.Data = s.writeString(f.Type, f.Data)
	case frames.TypeError:
		f = s.errorFrame(f)
	case frames.TypeDisplay, frames.TypeUpdateDisplay, frames.TypeResult:
		f = s.displayFrame(f)
	}
	return f
}

func (s *Sink) errorFrame(f frames.Frame) frames.Frame {
	if s.opt.Verbatim {
		// ipykernel colours its tracebacks and Jupyter keeps the colours;
		// the tail gets them sanitised all the same.
		if len(f.Traceback) == 0 {
			s.block(f.Ename + ": " + f.Evalue)
		} else {
			s.block(strings.Join(f.Traceback, "\n"))
		}
		return f
	}
	f.Evalue = Sanitize(f.Evalue)
	f.Ename = Sanitize(f.Ename)
	if len(f.Traceback) == 0 {
		s.block(f.Ename + ": " + f.Evalue)
		return f
	}
	tb := make([]string, len(f.Traceback))
	for i, line := range f.Traceback {
		tb[i] = Sanitize(line)
	}
	f.Traceback = tb
	s.block(strings.Join(f.Traceback, "\n"))
	return f
}
