package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
)

// exitQuit is what a shell reports for a command SIGQUIT ended (128+3), as
// python3 ends at Ctrl-\.
const exitQuit = 131

// interrupts turns Ctrl-C into cancellation: the first interrupts the
// running cell (and cancels the rest), the second kills the interpreters.
// SIGTERM and SIGHUP (the terminal went away) count as Ctrl-C, so the
// cell's processes are ended rather than orphaned by evalhost's exit.
// SIGQUIT (Ctrl-\) kills them at once, as it ends python3 at once, instead
// of Go's stack dump of evalhost.
type interrupts struct {
	sig    chan os.Signal
	quit   chan struct{}
	cancel context.CancelFunc
	wg     sync.WaitGroup
	n      atomic.Int32
	quitBy atomic.Bool           // a SIGQUIT came
	lost   atomic.Pointer[error] // the first failed write of the output
}

// outputLost cancels the run on the first write that failed.
func (in *interrupts) outputLost(err error) {
	if in.lost.CompareAndSwap(nil, &err) {
		in.cancel()
	}
}

// stoppedByOutput says whether the run stopped because its output could
// not be written (and no Ctrl-C came first), and with what exit code. A
// reader that left (| head) is the usual end of a pipeline: quiet, as a
// process killed by SIGPIPE is (141); any other failure (a full disk) is
// said, and is a failure (1), as python3's OSError is.
func (in *interrupts) stoppedByOutput(interrupts int, stderr io.Writer) (code int, stopped bool) {
	lost := in.lost.Load()
	if lost == nil || interrupts != 0 {
		return 0, false
	}
	if errors.Is(*lost, syscall.EPIPE) {
		return exitOutputClosed, true
	}
	fmt.Fprintf(stderr, "evalhost run: stopped: cannot write the output: %v\n", *lost)
	return exitFailed, true
}

func interruptible(kill func()) (context.Context, *interrupts) {
	ctx, cancel := context.WithCancel(context.Background())
	in := &interrupts{sig: make(chan os.Signal, 2), quit: make(chan struct{}), cancel: cancel}
	signal.Notify(in.sig, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	in.wg.Add(1)
	go func() {
		defer in.wg.Done()
		for {
			select {
			case s := <-in.sig:
				if s == syscall.SIGQUIT {
					in.quitBy.Store(true)
					in.n.Add(1)
					cancel()
					kill()
					continue
				}
				if in.n.Add(1) == 1 {
					cancel()
				} else {
					kill()
				}
			case <-in.quit:
				return
			}
		}
	}()
	return ctx, in
}

// exitCode is code, or exitQuit when a SIGQUIT ended the run.
func (in *interrupts) exitCode(code int) int {
	if in.quitBy.Load() {
		return exitQuit
	}
	return code
}

// stop ends signal handling and says how many interrupts arrived.
func (in *interrupts) stop() int {
	signal.Stop(in.sig)
	close(in.quit)
	in.wg.Wait()
	in.cancel()
	return int(in.n.Load())
}
