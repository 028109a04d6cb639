package sessions

import (
	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/streamsink"
)

// cellSink passes one cell's frames through a streamsink.Sink: text is
// sanitised, counted and spilled, big display payloads become artifacts.
type cellSink struct {
	sink *streamsink.Sink
}

// newCellSink falls back to default bounds if the options are invalid, so a
// bad setting degrades the view instead of failing the cell.
func newCellSink(opts streamsink.Options) *cellSink {
	s, err := streamsink.New(opts)
	if err != nil {
		s, _ = streamsink.New(streamsink.Options{Store: opts.Store, NoSpill: opts.NoSpill})
	}
	return &cellSink{sink: s}
}

func (c *cellSink) frame(f frames.Frame) frames.Frame { return c.sink.Frame(f) }

// held returns what the sink still holds of each stream (an unfinished
// UTF-8 sequence) as frames, already sanitised.
func (c *cellSink) held() []frames.Frame {
	var out []frames.Frame
	for _, t := range []frames.Type{frames.TypeStdout, frames.TypeStderr} {
		if text := c.sink.Flush(t); text != "" {
			out = append(out, frames.Frame{Type: t, Data: text})
		}
	}
	return out
}

// peek is the sink's summary so far, for a cell that is still running.
func (c *cellSink) peek() streamsink.Dump { return c.sink.Dump() }

// dump closes the sink (finishing its artifact) and returns its summary.
func (c *cellSink) dump() streamsink.Dump {
	_ = c.sink.Close()
	return c.sink.Dump()
}
