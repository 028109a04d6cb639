package host

import (
	"fmt"
	"syscall"
	"time"

	"github.com/evalhost/evalhost/frames"
)

// A cell sent after ExitAfterNextCell is its interpreter's last, and what
// the interpreter writes on fd 1 and 2 after the cell's end marks (atexit
// handlers, finalizers, a non-daemon thread's last prints, text flushed at
// exit) has no later cell to go to: it is the last cell's output. The pump
// sends it behind the cell's done frame, and Execute relays it until the
// streams end, so it reaches the caller before Execute returns, as the
// cell's stdout and stderr, after everything the cell itself wrote.

// exitText routes text a last cell's interpreter wrote after the cell's
// end mark on fd: held until the cell is complete (text of the cell's own
// may still be on its way on the other fd), then sent as read.
func (r *router) exitText(fd int, f frames.Frame) {
	c := r.cur
	if fd == 2 {
		r.p.tail.Write([]byte(f.Data))
	}
	f.ID = c.id
	if c.exiting {
		c.out <- f
		return
	}
	f.Data = r.p.own(fd, f.Data)
	c.after = append(c.after, f)
}

// sendAfter sends the exit-time text held for the current cell.
func (r *router) sendAfter() {
	c := r.cur
	for _, f := range c.after {
		c.out <- f
	}
	c.after = nil
}

// exitWait bounds a last cell's wait for its interpreter to exit. The wait
// is part of the cell and lasts while the cell's context does, as
// `python3 -c` waits for non-daemon threads; once the context has ended
// (the cell's timeout, an interrupt) the interpreter has Options.Grace to
// exit, then it gets SIGTERM and, termGrace later, SIGKILL, as Close would
// give it. The runner ignores SIGINT between cells, so none is sent.
type exitWait struct {
	t      *time.Timer
	c      <-chan time.Time
	termed bool
	cut    bool // the context ended while the interpreter was exiting
}

func (w *exitWait) arm(d time.Duration) {
	if w.t != nil {
		return
	}
	w.t = time.NewTimer(d)
	w.c = w.t.C
}

// step stops the interpreter that outlived the wait, saying so in the cell's
// output first.
func (w *exitWait) step(p *Process, id string, out relay) {
	if w.termed {
		w.c = nil
		_ = p.signalGroup(syscall.SIGKILL)
		return
	}
	w.termed = true
	out.send(frames.Frame{Type: frames.TypeWarning, ID: id, Message: fmt.Sprintf(
		"the interpreter was still running %s after its last cell's time ran out (a non-daemon thread or an atexit handler); it was stopped, and what it would have printed after this is lost",
		p.opts.Grace)})
	_ = p.signalGroup(syscall.SIGTERM)
	w.t.Reset(termGrace)
}

func (w *exitWait) stop() {
	if w.t != nil {
		w.t.Stop()
	}
}
