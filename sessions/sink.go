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
		s, _ = streamsink.New(streamsink.Options{Store: opts.Store})
	}
	return &cellSink{sink: s}
}

func (c *cellSink) frame(f frames.Frame) frames.Frame { return c.sink.Frame(f) }

// dump closes the sink (finishing its artifact) and returns its summary.
func (c *cellSink) dump() streamsink.Dump {
	_ = c.sink.Close()
	return c.sink.Dump()
}
