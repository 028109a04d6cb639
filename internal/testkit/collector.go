package testkit

import (
	"strings"
	"sync"

	"github.com/evalhost/evalhost/frames"
)

// Collector records frames; its Emit may be called from any goroutine.
type Collector struct {
	mu     sync.Mutex
	frames []frames.Frame
}

// Emit records f.
func (c *Collector) Emit(f frames.Frame) {
	c.mu.Lock()
	c.frames = append(c.frames, f)
	c.mu.Unlock()
}

// All returns a copy of the frames recorded so far.
func (c *Collector) All() []frames.Frame {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]frames.Frame(nil), c.frames...)
}

// First returns the first frame of type typ, or nil.
func (c *Collector) First(typ frames.Type) *frames.Frame {
	for _, f := range c.All() {
		if f.Type == typ {
			return &f
		}
	}
	return nil
}

// Text joins the Data of the frames of type typ.
func (c *Collector) Text(typ frames.Type) string {
	var b strings.Builder
	for _, f := range c.All() {
		if f.Type == typ {
			b.WriteString(f.Data)
		}
	}
	return b.String()
}
