package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/evalhost/evalhost/internal/readergone"
)

// errOutputClosed is why serve and mcp stop when their client closes its
// end of stdout (it stopped reading, or died and left the pipe to a
// child): their answers have nowhere to go. They end the cells running and
// every session, say so on stderr and exit exitOutputClosed, the status a
// shell reports for a command SIGPIPE killed, instead of dying of SIGPIPE
// at their next write (Go's default on descriptor 1). They do only when a
// request was cut short (serve.ErrOutputGone, mcp.ErrOutputGone): with
// every answer written they end as at the end of their input, exit 0.
var errOutputClosed = errors.New("stdout was closed: the client stopped reading its end")

// outputFailedError is why serve and mcp stop when a write to stdout
// failed for another reason than its reader's leaving (a full disk under
// `> file`, /dev/full, an I/O error): every later answer would be lost
// too, so they end their work as for a closed stdout, say so and exit
// exitFailed, where they went on in silence and exited 0.
type outputFailedError struct{ err error }

func (e *outputFailedError) Error() string {
	return fmt.Sprintf("cannot write stdout: %v", errors.Unwrap(e.err))
}

func (e *outputFailedError) Unwrap() error { return e.err }

// outputEnd is how stdout can end while serve or mcp runs: its reader
// gone (the watch's Gone), or a write that failed otherwise (failed).
type outputEnd struct {
	watch  *readergone.Watcher // nil: the reader is not watched here
	once   sync.Once
	failed chan struct{}
	err    error // the failed write's, set before failed is closed
}

// note tells the end of a write's error: EPIPE is the reader's leaving;
// a deadline (serve's bound on a stalled client, serve/stall.go) and a
// close are the server's own shutdown, not a failure of the output.
func (o *outputEnd) note(err error) error {
	if o.watch != nil {
		o.watch.NoteWrite(err)
	}
	if err == nil || errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, os.ErrClosed) {
		return err
	}
	o.once.Do(func() {
		o.err = &outputFailedError{err: err}
		close(o.failed)
	})
	return err
}

// failure is the failed write's error, nil while none failed (or for a
// nil end). Asked once the server returned: it may have ended at the end
// of its input before the context heard of the failure.
func (o *outputEnd) failure() error {
	if o == nil {
		return nil
	}
	select {
	case <-o.failed:
		return o.err
	default:
		return nil
	}
}

// stdoutFailedContext is ctx, cancelled with an *outputFailedError once a
// write to stdout failed otherwise than for want of a reader; stop ends
// the watch. A nil end is never seen to fail. Its reader's leaving is the
// server's to judge (serve.Config.OutputGone, mcp.RunStdio): it ends the
// work at once only when a request is unanswered.
func stdoutFailedContext(ctx context.Context, end *outputEnd) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	var failed <-chan struct{}
	if end != nil {
		failed = end.failed
	}
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case <-failed:
			cancel(end.err)
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

// watchedOutput is pollableOutput with a watch on how it ends: its reader
// gone, seen without a write where the system tells (internal/readergone:
// a pipe, a socket), as a cell may run for hours with nothing to say, and
// at a write's EPIPE (unless watchReader is false: the writer's user
// watches it); or a write that failed otherwise. stop ends the watch and
// restores stdout; call it once the last write returned.
func watchedOutput(out io.Writer, watchReader bool) (w io.Writer, end *outputEnd, stop func()) {
	end = &outputEnd{failed: make(chan struct{})}
	if watchReader {
		end.watch = readergone.Watch(out)
	}
	w, restore := pollableOutput(out)
	return endingOutput{w: w, end: end}, end, func() {
		restore()
		if end.watch != nil {
			end.watch.Stop()
		}
	}
}

// endingOutput tells end of each write's error.
type endingOutput struct {
	w   io.Writer
	end *outputEnd
}

func (o endingOutput) Write(p []byte) (int, error) {
	n, err := o.w.Write(p)
	return n, o.end.note(err)
}

// SetWriteDeadline bounds the writes where w can (serve/stall.go).
func (o endingOutput) SetWriteDeadline(t time.Time) error {
	if d, ok := o.w.(interface{ SetWriteDeadline(time.Time) error }); ok {
		return d.SetWriteDeadline(t)
	}
	return errors.ErrUnsupported
}
