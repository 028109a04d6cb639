package main

import (
	"context"
	"errors"
	"io"
	"sync"
	"syscall"
	"time"
)

// errOutputClosed is why serve and mcp stop when their client closes its
// end of stdout (it stopped reading, or died and left the pipe to a
// child): their answers have nowhere to go. They end the cells running and
// every session, say so on stderr and exit exitOutputClosed, the status a
// shell reports for a command SIGPIPE killed, instead of dying of SIGPIPE
// at their next write (Go's default on descriptor 1).
var errOutputClosed = errors.New("stdout was closed: the client stopped reading its end")

// outputGone is closed once stdout's reader is gone: a watch saw its pipe's
// error condition, or a write failed with EPIPE.
type outputGone struct {
	ch   chan struct{}
	once sync.Once
}

func newOutputGone() *outputGone { return &outputGone{ch: make(chan struct{})} }

func (g *outputGone) close() { g.once.Do(func() { close(g.ch) }) }

// noteEPIPE closes g when err says the reader is gone, and returns err.
func (g *outputGone) noteEPIPE(err error) error {
	if errors.Is(err, syscall.EPIPE) {
		g.close()
	}
	return err
}

// stdoutGoneContext is ctx, cancelled with errOutputClosed once gone is
// closed; stop ends the watch.
func stdoutGoneContext(ctx context.Context, gone <-chan struct{}) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case <-gone:
			cancel(errOutputClosed)
		case <-ctx.Done():
		case <-done:
		}
	}()
	return ctx, func() {
		close(done)
		<-exited
		cancel(nil)
	}
}

// watchedOutput is pollableOutput with a watch on its reader: gone is
// closed once the client closed its end of stdout, seen at once where the
// system tells (watchReader: a pipe or a Unix socket on Linux, without a
// write, as a cell may run for hours with nothing to say) and at a
// write's EPIPE otherwise. stop ends the watch and restores stdout; call
// it once the last write returned.
func watchedOutput(out io.Writer) (w io.Writer, gone <-chan struct{}, stop func()) {
	g := newOutputGone()
	endWatch := watchReader(out, g)
	w, restore := pollableOutput(out)
	return goneOnEPIPE{w: w, gone: g}, g.ch, func() { restore(); endWatch() }
}

// goneOnEPIPE closes gone at a write's EPIPE: the reader of stdout is
// gone.
type goneOnEPIPE struct {
	w    io.Writer
	gone *outputGone
}

func (o goneOnEPIPE) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	return n, o.gone.noteEPIPE(err)
}

// SetWriteDeadline bounds the writes where w can (serve/stall.go).
func (o goneOnEPIPE) SetWriteDeadline(t time.Time) error {
	if d, ok := o.w.(interface{ SetWriteDeadline(time.Time) error }); ok {
		return d.SetWriteDeadline(t)
	}
	return errors.ErrUnsupported
}
