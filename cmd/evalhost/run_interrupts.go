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

	"github.com/evalhost/evalhost/backend"
)

// exitQuit is what a shell reports for a command SIGQUIT ended (128+3):
// nb run's status at Ctrl-\ (a run, attached or not, dies of it, as
// python3 does: runOutcome).
const exitQuit = 131

// interrupts turns Ctrl-C into cancellation: the first interrupts the
// running cell (and cancels the rest), the second kills the interpreters.
// The first interrupts the interpreter's process group, its children with
// it, as a Ctrl-C typed at the terminal reaches python3's, unless an
// alone (a run's, attached or not) says the SIGINT cannot be the terminal's: then
// the interpreter alone, as kill -INT of python3's pid
// (backend.ErrInterruptAlone). What follows it (the grace window's
// SIGTERM and SIGKILL, the second Ctrl-C's kill) ends the whole group.
// SIGQUIT (Ctrl-\) goes to the interpreter running a cell when there is a
// quit forwarder (a run's; an attached run's through the background
// process): to its process group, its children
// with it, when it can be the terminal's Ctrl-\, which reaches python3's
// children too, else to it alone, as kill -QUIT of python3's pid
// (keyFromTerminal): a handler the script set runs
// (faulthandler's traceback dump, one of its own; each time), one it
// ignores does nothing, and by default the interpreter dies of it, and so
// does the run (exitSignal). Otherwise (no cell running: before the
// interpreter is up, between cells; a gateway kernel, nb run) it kills
// them at once, as it ends python3 at once, instead of Go's
// stack dump of evalhost.
//
// SIGTERM and SIGHUP (the terminal went away) go to the script's
// interpreter when there is a forwarder (a run's) and it has one
// running, as they would reach python3: a handler the script set runs,
// and without one the interpreter dies of it, and so does the run
// (exitSignal); an attached run's go to its session's interpreter through
// the background process. Otherwise (no interpreter yet, a gateway
// kernel, nb run) they count as Ctrl-C, so the cell's processes are ended
// rather than orphaned by evalhost's exit, and the run then dies of the
// signal. SIGUSR1 and SIGUSR2 are subscribed only with a forwarder (Go
// would ignore them; python3 without a handler dies of them), and one no
// interpreter took ends the run as SIGTERM does, and a one-shot run dies of
// it (runOutcome), as python3 would have.
type interrupts struct {
	sig       chan os.Signal
	enabled   chan struct{} // closed once sig is notified of the signals
	quit      chan struct{}
	cancel    func()                    // cancels the run
	kill      func()                    // the second Ctrl-C's
	mu        sync.Mutex                // stopped
	stopped   bool                      // stop was called
	interrupt func()                    // the first Ctrl-C's cancel (interruptOpts.wait)
	forward   func(syscall.Signal) bool // nil: nothing is forwarded
	quitTo    func(syscall.Signal) bool // nil: SIGQUIT is not forwarded
	jobs      *jobControl               // nil: no job control
	echo      func(syscall.Signal)      // nil: the terminal echoes its own signals' keys
	wg        sync.WaitGroup
	n         atomic.Int32
	quitBy    atomic.Bool               // a SIGQUIT came
	lost      atomic.Pointer[lostWrite] // the first failed write of the output
	// forwarded holds a bit for each signal passed on to the interpreter;
	// fatal is the last SIGTERM or SIGHUP that counted as Ctrl-C instead.
	forwarded atomic.Uint64
	fatal     atomic.Int32
	// writing holds when a write of stdout (0) or stderr (1) in progress
	// began (UnixNano; 0: none), for watchStuck.
	writing   [2]atomic.Int64
	stuckOnce sync.Once
}

// lostWrite is a run's first failed write of its output: to stdout (slot
// 0) or stderr (1).
type lostWrite struct {
	err  error
	slot int
}

// outputLost cancels the run on the first write that failed.
// After a Ctrl-C the script took (a percent script's later cells run on
// past it, without the run's cancellation), the cancel no longer reaches
// them: they are killed, as python3 would die at its next write; not here,
// in a write of the cell's output, which Kill would wait for.
func (in *interrupts) outputLost(slot int, err error) {
	if in.lost.CompareAndSwap(nil, &lostWrite{err, slot}) {
		in.cancel()
		in.mu.Lock()
		if in.n.Load() > 0 && !in.stopped {
			in.wg.Add(1)
			go func() { defer in.wg.Done(); in.kill() }()
		}
		in.mu.Unlock()
	}
}

// outputGone says whether a write of the output has failed: nothing more
// is written (guardedWriter).
func (in *interrupts) outputGone() bool { return in.lost.Load() != nil }

// stoppedByOutput says whether the run stopped because its output could
// not be written (and no Ctrl-C came first), and with what exit code. A
// reader that left (| head) is the usual end of a pipeline: quiet, as a
// process killed by SIGPIPE is (141); any other failure (a full disk) is a
// failure (1), as python3's OSError at the write is, said on stderr (the
// run's own, not the guarded one, which writes nothing more) in one line
// naming the stream and the error, as python3's traceback ends; nothing
// of how the script was stopped (its interrupt's traceback, the cell's
// notices) was shown, as python3 stopped at the write itself.
//
// flushFails, when not nil, says whether the script's python3 would also
// fail its exit's flush of a stdout it could not write (exitsAt120): it
// exits 120 then.
func (in *interrupts) stoppedByOutput(interrupts int, stderr io.Writer, flushFails func() bool) (code int, stopped bool) {
	lost := in.lost.Load()
	if lost == nil || interrupts != 0 {
		return 0, false
	}
	if errors.Is(lost.err, syscall.EPIPE) {
		return exitOutputClosed, true
	}
	cause := lost.err
	var errno syscall.Errno
	if errors.As(cause, &errno) {
		cause = errno // not os.Stdout's name, /dev/stdout, which is not the file
	}
	fmt.Fprintf(stderr, "evalhost run: cannot write %s: %v; the script was stopped\n", [2]string{"stdout", "stderr"}[lost.slot], cause)
	if lost.slot == 0 && flushFails != nil && flushFails() {
		return exitFlushFailed, true
	}
	return exitFailed, true
}

// interruptOpts is what a command's signals do beyond Ctrl-C's defaults.
type interruptOpts struct {
	// forward, when not nil, passes a signal on to the script's
	// interpreter and says whether one got it.
	forward func(syscall.Signal) bool
	// quitTo, when not nil, passes SIGQUIT on to the interpreter running
	// a cell (Python's or bash's; its process group, or it alone: run_local.go)
	// and says whether one got it.
	quitTo func(syscall.Signal) bool
	// jobs, when not nil, stops and continues the script's interpreter's
	// process group: Ctrl-Z (SIGTSTP) then stops it
	// with evalhost, and SIGCONT (fg, bg) continues it (jobControl).
	jobs *jobControl
	// wait: the first Ctrl-C interrupts the cell and waits for it as
	// python3 would, while its handling takes, within the cell's timeout
	// (a second Ctrl-C kills it), instead of killing it after the grace
	// window.
	wait bool
	// echo, when not nil, shows the key of a terminal's signal (--tty's
	// terminal does not echo it itself).
	echo func(syscall.Signal)
	// alone, when not nil, says as the first Ctrl-C comes whether it
	// interrupts the interpreter alone (interruptAlone), not its group.
	alone func() bool
}

// interruptible starts handling the signals; kill is the second Ctrl-C's
// (and SIGQUIT's). A SIGINT, SIGHUP or SIGTSTP that evalhost was started
// ignoring (a background job's, nohup's, a trap "" TSTP) stays ignored, as
// python3 leaves it. An inherited SIG_IGN of SIGQUIT, SIGTERM, SIGUSR1 or
// SIGUSR2 cannot be kept: Go's runtime installs its handler over it before
// any of evalhost runs, and tells no one it was there (sigIgnored).
func interruptible(kill func(), opts interruptOpts) (context.Context, *interrupts) {
	ctx, cancel := context.WithCancelCause(context.Background())
	in := &interrupts{sig: make(chan os.Signal, 4), enabled: make(chan struct{}), quit: make(chan struct{}), cancel: func() { cancel(nil) },
		kill: kill, forward: opts.forward, quitTo: opts.quitTo, echo: opts.echo}
	in.interrupt = func() {
		var cause error // nil: context.Canceled, any cancel's
		if opts.wait {
			cause = backend.ErrInterruptWait
		}
		if opts.alone != nil && opts.alone() {
			cause = errors.Join(cause, backend.ErrInterruptAlone)
		}
		cancel(cause)
	}
	var sigs []os.Signal
	for _, sig := range []os.Signal{os.Interrupt, syscall.SIGHUP} {
		if !signal.Ignored(sig) {
			sigs = append(sigs, sig)
		}
	}
	sigs = append(sigs, syscall.SIGTERM, syscall.SIGQUIT)
	if opts.forward != nil {
		sigs = append(sigs, syscall.SIGUSR1, syscall.SIGUSR2)
	}
	if opts.jobs != nil {
		in.jobs = opts.jobs
		sigs = append(sigs, jobControlSignals()...)
	}
	in.wg.Add(1)
	go func() {
		defer in.wg.Done()
		// Enabled here, off the way to the interpreter's start: each
		// signal's first Notify is a round trip with the runtime's
		// signal-mask thread (0.1-0.4 ms for these, more under load). One
		// that comes before has its default action, as it would have for a
		// python3 still starting, before anything of the script ran.
		signal.Notify(in.sig, sigs...)
		handOverQuit() // a run's SIGQUIT is in.sig's now
		close(in.enabled)
		// Taken off in.sig at once, handled in turn (sigQueue).
		q := newSigQueue()
		in.wg.Add(1)
		go func() {
			defer in.wg.Done()
			for {
				select {
				case s := <-in.sig:
					q.put(s)
				case <-in.quit:
					return
				}
			}
		}()
		for {
			select {
			case <-q.ready:
				for sig, ok := q.take(); ok && !in.ending(); sig, ok = q.take() {
					in.handle(sig)
				}
			case <-in.quit:
				return
			}
		}
	}()
	return ctx, in
}

// ending says whether stop has closed quit: what is still queued is not
// handled.
func (in *interrupts) ending() bool {
	select {
	case <-in.quit:
		return true
	default:
		return false
	}
}

// handle is what one signal does (see interrupts).
func (in *interrupts) handle(sig syscall.Signal) {
	if in.echo != nil {
		in.echo(sig)
	}
	if sig != syscall.SIGTSTP && sig != syscall.SIGCONT {
		in.watchStuck(sig)
	}
	switch {
	case sig == syscall.SIGQUIT && in.quitTo != nil && in.quitTo(sig):
		in.forwarded.Or(1 << uint(sig))
		return
	case sig == syscall.SIGQUIT:
		in.quitBy.Store(true)
		in.n.Add(1)
		in.cancel()
		in.kill()
		return
	case sig == syscall.SIGTSTP || sig == syscall.SIGCONT:
		in.jobControl(sig)
		return
	case sig != syscall.SIGINT && in.forward != nil && in.forward(sig):
		in.forwarded.Or(1 << uint(sig))
		return
	case sig != syscall.SIGINT:
		in.fatal.Store(int32(sig))
		if in.n.Add(1) == 1 {
			in.cancel() // python3 would be gone at once
		} else {
			in.kill()
		}
		return
	}
	if in.n.Add(1) == 1 {
		in.interrupt()
	} else {
		in.kill()
	}
}

// passedOn says whether sig was forwarded to the interpreter, so its death
// by sig is the script's, as python3's would be, and no news.
func (in *interrupts) passedOn(sig int) bool {
	return sig > 0 && sig < 64 && in.forwarded.Load()&(1<<uint(sig)) != 0
}

// diesOf says whether a one-shot run dies of sig when its interpreter does
// (runOutcome), as python3 would: one passed on, or any it can die of.
func (in *interrupts) diesOf(sig int) bool { return in.passedOn(sig) || canDieOf(sig) }

// silenced says whether a signal run was sent ends it, and run dies of it
// (runOutcome) as python3 would have, without a word: a Ctrl-\ (SIGQUIT)
// no interpreter took, or a SIGTERM, SIGHUP, SIGUSR1 or SIGUSR2 no interpreter took.
func (in *interrupts) silenced() bool {
	if in.quitBy.Load() {
		return canDieOf(int(syscall.SIGQUIT))
	}
	sig := in.fatal.Load()
	return sig != 0 && canDieOf(int(sig))
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
	in.mu.Lock()
	in.stopped = true // no kill starts after this: wg is waited for below
	in.mu.Unlock()
	<-in.enabled
	signal.Stop(in.sig)
	close(in.quit)
	in.wg.Wait()
	in.cancel()
	return int(in.n.Load())
}
