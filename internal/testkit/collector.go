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

// Text joins the Data of the frames of type typ recorded so far.
func (c *Collector) Text(typ frames.Type) string { return Text(c.All(), typ) }

// Text joins the Data of the frames of type typ in fs.
func Text(fs []frames.Frame, typ frames.Type) string {
	var b strings.Builder
	for _, f := range fs {
		if f.Type == typ {
			b.WriteString(f.Data)
		}
	}
	return b.String()
}

// Cell records f; its signature is the emit function of a sessions
// request, which also names the cell.
func (c *Collector) Cell(_ int, f frames.Frame) { c.Emit(f) }

// Output renders what a person would read of the frames recorded; see
// [Output].
func (c *Collector) Output() string { return Output(c.All()) }

// Output renders what a person would read of fs: text, the plain text of
// results and displays, and errors as "Ename: Evalue".
func Output(fs []frames.Frame) string {
	var b strings.Builder
	for _, f := range fs {
		switch f.Type {
		case frames.TypeStdout, frames.TypeStderr:
			b.WriteString(f.Data)
		case frames.TypeResult, frames.TypeDisplay:
			b.WriteString(f.Bundle.DisplayText() + "\n")
		case frames.TypeError:
			b.WriteString(f.Ename + ": " + f.Evalue + "\n")
		}
	}
	return b.String()
}

// PIDs lists the process ids of the ready frames recorded: one per
// interpreter started.
func (c *Collector) PIDs() []int {
	var pids []int
	for _, f := range c.All() {
		if f.Type == frames.TypeReady {
			pids = append(pids, f.PID)
		}
	}
	return pids
}
