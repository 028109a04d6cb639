package main

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/evalhost/evalhost/internal/readergone"
)

// errOutputClosed is why serve and mcp stop when their client closes its
// end of stdout (it stopped reading, or died and left the pipe to a
// child): their answers have nowhere to go. They end the cells running and
// every session, say so on stderr and exit exitOutputClosed, the status a
// shell reports for a command SIGPIPE killed, instead of dying of SIGPIPE
// at their next write (Go's default on descriptor 1).
var errOutputClosed = errors.New("stdout was closed: the client stopped reading its end")

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
// closed once the client closed its end of stdout, seen without a write
// where the system tells (internal/readergone: a pipe, a socket), as a
// cell may run for hours with nothing to say, and at a write's EPIPE.
// stop ends the watch and restores stdout; call it once the last write
// returned.
func watchedOutput(out io.Writer) (w io.Writer, gone <-chan struct{}, stop func()) {
	watch := readergone.Watch(out)
	w, restore := pollableOutput(out)
	return goneOnEPIPE{w: w, watch: watch}, watch.Gone(), func() { restore(); watch.Stop() }
}

// goneOnEPIPE tells watch of a write's EPIPE: the reader of stdout is
// gone.
type goneOnEPIPE struct {
	w     io.Writer
	watch *readergone.Watcher
}

func (o goneOnEPIPE) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	return n, o.watch.NoteWrite(err)
}

// SetWriteDeadline bounds the writes where w can (serve/stall.go).
func (o goneOnEPIPE) SetWriteDeadline(t time.Time) error {
	if d, ok := o.w.(interface{ SetWriteDeadline(time.Time) error }); ok {
		return d.SetWriteDeadline(t)
	}
	return errors.ErrUnsupported
}
