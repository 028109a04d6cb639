package host

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/reaper"
)

// termGrace is how long a SIGTERM gets before SIGKILL, once the grace window
// for an interrupt or an exit request has passed.
const termGrace = 250 * time.Millisecond

// drainTimeout is how long the output pipes may stay open after the child is
// reaped: where there is no subreaper (macOS), a grandchild outside the
// process group survives the reaper and may hold them forever.
const drainTimeout = 150 * time.Millisecond

// Process is one running runner.py interpreter. Execute runs one cell at a
// time; the other methods are safe to call from any goroutine.
type Process struct {
	opts  Options
	child *reaper.Child
	pid   int
	nonce string
	ready frames.Frame

	reqW             *os.File  // fd 0 of the child, write end
	req              io.Writer // writes reqW (raw system calls on Linux: rawio)
	outR, errR, frR  *os.File  // fds 1, 2, 3 of the child, read ends
	wakeRaw          func()    // ends the ordered reader of fd 1 and 2 once their pipes are closed (order_linux.go), or nil
	events           chan event
	batches          chan []frames.Frame // evFrames' arrays, back from the pump for reuse
	out              chan frames.Frame   // the running cell's frames (pump.go, cell)
	readyCh          chan frames.Frame
	exited, pumpDone chan struct{}
	status           syscall.WaitStatus // the runner's; set before exited is closed

	tail      tailRing
	busy      atomic.Bool
	closing   atomic.Bool
	lastCell  atomic.Bool // the next cell sent is the last (ExitAfterNextCell)
	exitSent  atomic.Bool // the exit request is written (or being written)
	seq       atomic.Uint64
	posMarks  atomic.Int64 // position marks seen (position.go)
	raw       [3]rawState  // the fd 1 and fd 2 readers' progress (stream.go)
	stops     stopClock    // job control's stops, which the pump's waits do not count
	next      cellSlot     // the cell Execute offers the pump (pump.go)
	closeOnce sync.Once
	wg        sync.WaitGroup

	chunks [3]*chunks // by fd: the raw readers' buffers (chunks.go)
}

// Ready returns the runner's ready frame.
func (p *Process) Ready() frames.Frame { return p.ready }

// Pid returns the interpreter's process id (also its process group id).
func (p *Process) Pid() int { return p.pid }

// Done is closed once the interpreter has exited and been reaped.
func (p *Process) Done() <-chan struct{} { return p.exited }

// Alive reports whether the interpreter has not exited yet.
func (p *Process) Alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// Interrupt sends SIGINT to the interpreter's process group: the running cell
// gets a KeyboardInterrupt; an idle runner ignores it.
func (p *Process) Interrupt() error {
	if !p.Alive() {
		return fmt.Errorf("interrupt: %w", backend.ErrClosed)
	}
	if err := p.signalGroup(syscall.SIGINT); err != nil {
		return fmt.Errorf("interrupt pid %d: %w", p.pid, err)
	}
	return nil
}

// Signal sends sig to the interpreter itself, not its process group, as
// kill(1) of a python3 process would: to its main thread, where Python runs
// a handler the script set (a blocking call there returns EINTR and the
// handler runs at once). Without a handler the signal's default action
// applies (SIGTERM, SIGHUP, SIGUSR1 end the interpreter, which a cell then
// reports as a death). ErrClosed once the interpreter has exited;
// ErrNotRunning while no cell runs (or exits): an idle interpreter killed
// so would be found dead only at its next cell, which another language's
// running cell may delay for its whole timeout, so the caller decides what
// the signal means instead.
func (p *Process) Signal(sig syscall.Signal) error {
	if !p.Alive() {
		return fmt.Errorf("signal %v: %w", sig, backend.ErrClosed)
	}
	if !p.busy.Load() {
		return fmt.Errorf("signal %v: %w", sig, ErrNotRunning)
	}
	wakeThread(p.pid, sig)
	return nil
}

// SignalGroup sends sig to the interpreter's process group: the cell's
// children with it, as a terminal signals its foreground job (SIGSTOP and
// SIGCONT for job control: the time from one to the other is not counted
// by the waits for a cell's end marks, an interrupt's grace window and
// SIGTERM, or an exit, stopclock.go). ErrClosed once the interpreter has
// exited.
func (p *Process) SignalGroup(sig syscall.Signal) error {
	if !p.Alive() {
		return fmt.Errorf("signal %v: %w", sig, backend.ErrClosed)
	}
	if err := p.signalGroup(sig); err != nil {
		return err
	}
	switch sig {
	case syscall.SIGSTOP:
		p.stops.stop()
	case syscall.SIGCONT:
		p.stops.cont()
	}
	return nil
}

// SignalForeground sends sig to the interpreter's process group while a
// cell runs, as a terminal's key (Ctrl-\) reaches its foreground job: the
// interpreter, where a handler the script set runs, and the cell's
// children. ErrNotRunning while no cell runs (an idle interpreter killed
// so would be found dead only at its next cell: see Signal), ErrClosed
// once the interpreter has exited.
func (p *Process) SignalForeground(sig syscall.Signal) error {
	if !p.Alive() {
		return fmt.Errorf("signal %v: %w", sig, backend.ErrClosed)
	}
	if !p.busy.Load() {
		return fmt.Errorf("signal %v: %w", sig, ErrNotRunning)
	}
	return p.signalGroup(sig)
}

// Close asks the runner to exit, waits up to Options.Grace, then terminates
// and kills the process group. It returns once the child is reaped and every
// goroutine of p has ended. Safe to call more than once and with Kill.
// An interpreter stopped by job control (SignalGroup's SIGSTOP) is
// continued first, so it is closed as a running one is: an idle one reads
// the exit request and leaves, a cell's gets the grace window and then the
// SIGTERM, whose handler runs (terminate).
// Do not call it from an Execute emit callback: it waits for that cell.
func (p *Process) Close() error {
	p.closeOnce.Do(func() {
		p.closing.Store(true)
		if _, stopped := p.stops.stopped(); stopped != nil {
			_ = p.SignalGroup(syscall.SIGCONT)
		}
		p.requestExit()
		if p.waitExit(p.opts.Grace) {
			return
		}
		p.terminate()
		if !p.waitExit(p.opts.termGrace) {
			_ = p.signalGroup(syscall.SIGKILL)
		}
	})
	<-p.exited
	p.wg.Wait()
	return nil
}

// Kill kills the runner and everything it started at once and returns once
// they are gone and every goroutine of p has ended. Safe to call more than
// once.
// Do not call it from an Execute emit callback: it waits for that cell.
func (p *Process) Kill() error {
	p.closing.Store(true)
	if p.Alive() {
		_ = p.signalGroup(syscall.SIGKILL)
	}
	p.child.Kill()
	<-p.exited
	p.wg.Wait()
	return nil
}

// ExitAfterNextCell says the next cell Execute sends is this interpreter's
// last: the exit request follows it at once, so the runner leaves as soon
// as the cell ends rather than after another round trip (a one-shot run's
// last cell). The cell itself runs, is interrupted and reports as any
// other; what the interpreter writes as it exits is the cell's output, and
// its Execute returns once the interpreter's output has ended (while ctx
// lasts; then it has Options.Grace to exit before it is stopped, and the
// done reads cancelled). An interpreter that then exits non-zero or by a
// signal of its own makes the cell an error (InterpreterExit) saying how.
// Execute calls after it fail with ErrClosed; Close
// still waits for the runner's exit, as always.
func (p *Process) ExitAfterNextCell() { p.lastCell.Store(true) }

// requestExit writes the exit request and closes stdin, which the runner
// also takes as a request to leave. Only the first call writes.
func (p *Process) requestExit() {
	if !p.exitSent.CompareAndSwap(false, true) {
		return
	}
	line := append(frames.AppendRequest(nil, &frames.Request{Exit: true}), '\n')
	_ = p.reqW.SetWriteDeadline(time.Now().Add(p.opts.Grace))
	_, _ = p.req.Write(line)
	_ = p.reqW.Close()
}

// exitRequested says the runner was asked to leave: no cell may follow.
func (p *Process) exitRequested() bool { return p.exitSent.Load() }

func (p *Process) waitExit(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.exited:
		return true
	case <-t.C:
		return false
	}
}

// waitExitRunning is waitExit for d of the time the interpreter could run
// (runTimer): for a wait the interpreter may end by its own work, which a
// stop of job control holds. Close's waits count wall time: a close must
// end an interpreter that stays stopped.
func (p *Process) waitExitRunning(d time.Duration) bool {
	var t runTimer
	t.reset(&p.stops, d)
	defer t.stop()
	for {
		select {
		case <-p.exited:
			return true
		case <-t.C:
			if t.expired() {
				return false
			}
		case <-t.R:
			t.resume()
		}
	}
}

// terminate sends SIGTERM to the process group and then SIGCONT, as a
// shell's kill of a stopped job does (kill %1): a stopped interpreter can
// neither run a SIGTERM handler the script set (a checkpoint) nor, with
// one, die of it until it is continued, and would wait out termGrace for
// the SIGKILL. SignalGroup records the stop's end (stopClock). A group
// stopped behind the host's back (a cell's own SIGSTOP) is continued too;
// one that runs only gets the SIGCONT (a handler of it the script set
// runs, as the interpreter ends).
func (p *Process) terminate() {
	_ = p.signalGroup(syscall.SIGTERM)
	_ = p.SignalGroup(syscall.SIGCONT)
}

// signalGroup signals the whole process group, so shell pipelines and
// subprocesses the cell started get the same interrupt or kill.
func (p *Process) signalGroup(sig syscall.Signal) error {
	err := syscall.Kill(-p.pid, sig)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// waitChild waits for the runner's reaper, which exits once the runner and
// everything it started are gone, and closes the pipes once drained.
func (p *Process) waitChild() {
	defer p.wg.Done()
	var err error
	p.status, err = p.child.Wait()
	close(p.exited)
	if err != nil {
		// The reaper itself was killed: end the runner's group here.
		_ = p.signalGroup(syscall.SIGKILL)
	}
	t := time.NewTimer(drainTimeout)
	select {
	case <-p.pumpDone:
	case <-t.C:
	}
	t.Stop()
	for _, f := range []*os.File{p.outR, p.errR, p.frR, p.reqW} {
		_ = f.Close()
	}
	if p.wakeRaw != nil {
		p.wakeRaw()
	}
}

// Death is how the interpreter ended on its own (a signal, an exit of its
// own): nil while it runs and when Close or Kill ended it. A caller that
// finds it gone between cells tells so what python3 would have died of.
func (p *Process) Death() *backend.DeathError {
	if p.Alive() || p.closing.Load() {
		return nil
	}
	return p.deathError()
}

// deathError describes how the reaped child ended.
func (p *Process) deathError() *backend.DeathError {
	e := &backend.DeathError{ExitCode: -1, StderrTail: p.tail.String()}
	if p.status.Signaled() {
		e.Signal, e.Signum = p.status.Signal().String(), int(p.status.Signal())
		return e
	}
	e.ExitCode = p.status.ExitStatus()
	return e
}
