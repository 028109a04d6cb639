package host

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"syscall"
	"time"
	"unsafe"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
)

// maxIDLen bounds a request id, which travels inside the sync marks.
const maxIDLen = 200

// Execute runs req as one cell, keeping the contract of package backend
// (frames emitted serially before it returns the done frame; ErrBusy,
// ErrClosed, *DeathError, ErrKilled). Cancellation sends SIGINT to the
// process group and waits Options.Grace before it kills the group.
func (p *Process) Execute(ctx context.Context, req frames.Request, emit func(frames.Frame)) (frames.Frame, error) {
	return p.execute(ctx, req, emit, nil)
}

// ExecuteStreams is Execute for a caller that takes the cell's stdout and
// stderr as bytes: streams gets them in place of stdout and stderr frames,
// in order with the frames emit gets, from the same goroutine. p is lent
// from the reader's buffer and valid only during the call, as an
// io.Writer's p is (streams must not keep it): bulk output then moves from
// the pipe to the caller without a copy or an allocation per read.
func (p *Process) ExecuteStreams(ctx context.Context, req frames.Request, emit func(frames.Frame), streams func(t frames.Type, p []byte)) (frames.Frame, error) {
	return p.execute(ctx, req, emit, streams)
}

func (p *Process) execute(ctx context.Context, req frames.Request, emit func(frames.Frame), streams func(frames.Type, []byte)) (frames.Frame, error) {
	if req.Exit {
		return frames.Frame{}, errors.New("execute: an exit request is not a cell; call Close to stop the interpreter")
	}
	if p.closing.Load() || p.exitRequested() || !p.Alive() {
		return frames.Frame{}, fmt.Errorf("execute: %w", backend.ErrClosed)
	}
	if !p.busy.CompareAndSwap(false, true) {
		return frames.Frame{}, fmt.Errorf("execute: %w", backend.ErrBusy)
	}
	defer p.busy.Store(false)
	if req.ID == "" {
		req.ID = "c" + strconv.FormatUint(p.seq.Add(1), 10)
	} else if err := checkID(req.ID); err != nil {
		return frames.Frame{}, err
	}
	if err := ctx.Err(); err != nil {
		return frames.Frame{}, fmt.Errorf("execute: cell %q not sent: %w", req.ID, err)
	}
	c := &cell{id: req.ID, out: p.out, leaving: p.lastCell.Load()}
	if !p.offer(c) {
		// Its output ended between cells: it is exiting, and the reaper
		// tells how a moment after the interpreter is gone. Wait for it
		// so that Death says (an os._exit(N) in a thread is the
		// script's exit status), within the grace a cell's end gets.
		if !p.closing.Load() {
			p.waitExitRunning(p.opts.Grace)
		}
		return frames.Frame{}, fmt.Errorf("execute: %w", backend.ErrClosed)
	}
	killed := false
	req.Last = c.leaving // the runner's exit then reports what a script's streams lost
	if err := p.send(ctx, &req); err != nil && !errors.Is(err, syscall.EPIPE) {
		// A partly written request leaves the channel unusable.
		killed = true
		_ = p.signalGroup(syscall.SIGKILL)
	} else if p.lastCell.Load() {
		p.requestExit() // behind the cell in the pipe: read once it ends
	}
	return p.await(ctx, c, relay{p: p, emit: emit, streams: streams}, killed)
}

// relay hands the cell's frames to the caller. Stream text may be lent from
// a reader's chunk (chunks.go): streams reads it, then the loan ends; emit
// gets a copy the caller may keep.
type relay struct {
	p       *Process
	emit    func(frames.Frame)
	streams func(frames.Type, []byte)
}

func (r relay) send(f frames.Frame) {
	fd := 1
	switch f.Type {
	case frames.TypeStderr:
		fd = 2
	case frames.TypeStdout:
	default:
		r.emit(f)
		return
	}
	if r.streams == nil {
		f.Data = r.p.own(fd, f.Data)
		r.emit(f)
		return
	}
	if f.Data != "" {
		r.streams(f.Type, unsafe.Slice(unsafe.StringData(f.Data), len(f.Data)))
	}
	r.p.giveBack(fd, f.Data)
}

func checkID(id string) error {
	if len(id) > maxIDLen {
		return fmt.Errorf("execute: request id is %d bytes long; use at most %d", len(id), maxIDLen)
	}
	for _, r := range id {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("execute: request id %q contains a control character; use printable text", id)
		}
	}
	return nil
}

// send writes the request line; ctx ending interrupts a blocked write. A
// line the pipe takes at once (a warm cell's) goes out without arming that.
func (p *Process) send(ctx context.Context, req *frames.Request) error {
	line := frames.AppendRequest(make([]byte, 0, len(req.Code)+128), req)
	line = append(line, '\n')
	sent := 0
	if w, ok := p.req.(someWriter); ok {
		n, err := w.WriteSome(line)
		if err != nil {
			return fmt.Errorf("send cell %q: %w", req.ID, err)
		}
		if n == len(line) {
			return nil
		}
		sent = n
	}
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		_ = p.reqW.SetWriteDeadline(time.Unix(1, 0))
		close(fired)
	})
	n, err := p.req.Write(line[sent:])
	if !stop() {
		<-fired
		_ = p.reqW.SetWriteDeadline(time.Time{})
	}
	if sent+n == 0 && errors.Is(err, os.ErrDeadlineExceeded) {
		// Cancelled before a byte went out: send the cell whole after all
		// (await interrupts it as soon as it starts) rather than kill an
		// interpreter whose channel is intact. A runner that does not read
		// its requests within the grace is torn down as before.
		_ = p.reqW.SetWriteDeadline(time.Now().Add(p.opts.Grace))
		_, err = p.req.Write(line)
		_ = p.reqW.SetWriteDeadline(time.Time{})
	}
	if err != nil {
		return fmt.Errorf("send cell %q: %w", req.ID, err)
	}
	return nil
}

// someWriter writes what a pipe takes without waiting (rawio.File).
type someWriter interface {
	WriteSome(p []byte) (int, error)
}

// await relays c's frames to emit until the pump ends c.out (endOfCell), handling
// cancellation (interrupt, then escalation) on the way.
func (p *Process) await(ctx context.Context, c *cell, out relay, killed bool) (frames.Frame, error) {
	a := awaiting{p: p, c: c, out: out, killed: killed}
	defer a.stop()
	ctxDone := ctx.Done()
	for {
		select {
		case f := <-c.out:
			if f.Type == endOfCell {
				return a.end()
			}
			a.frame(ctx, f)
		case <-ctxDone:
			ctxDone = nil
			a.cancelled(ctx)
		case <-a.esc.limit:
			a.esc.limitPassed()
		case <-a.esc.t.C:
			if a.esc.t.expired() {
				a.esc.step(p)
			}
		case <-a.esc.t.R:
			a.esc.t.resume()
		case <-a.wake.c:
			p.wakeCell(&a.wake)
		case <-a.exit.limit:
			a.exit.limitPassed()
		case <-a.exit.t.C:
			if a.exit.t.expired() {
				a.exit.step(p, c.id, a.out)
			}
		case <-a.exit.t.R:
			a.exit.t.resume()
		}
	}
}

// awaiting is await's state for one cell: its done frame once in, and the
// timers of its cancellation (escalation), its wake-ups and a last cell's
// exit (exitWait), which only await's goroutine touches.
type awaiting struct {
	p       *Process
	c       *cell
	out     relay
	killed  bool
	done    *frames.Frame // &final once it is in
	final   frames.Frame  // not &f: that would move every frame to the heap
	esc     escalation
	wake    wakeups
	exit    exitWait // a last cell's wait for the exit (exitout.go)
	started bool
	pending bool // cancelled before the runner started the cell
	landed  bool // the interrupt was raised in the cell (done.Interrupted)
}

func (a *awaiting) stop() {
	a.esc.stop()
	a.wake.stop()
	a.exit.stop()
}

// end is the cell's result once the pump ended its stream.
func (a *awaiting) end() (frames.Frame, error) {
	if a.done != nil && a.exit.cut {
		a.done.Cancelled = true // it ran on past the cell's time
	}
	if a.done != nil {
		a.done.Interrupted = a.landed
	}
	if a.done != nil && a.c.leaving && !a.killed && !a.esc.killed {
		a.exit.status(a.p, a.done, a.out)
	}
	return a.p.outcome(a.c, a.done, a.killed || a.esc.killed)
}

// frame takes one of the cell's frames: its done is kept for the end,
// the rest relayed.
func (a *awaiting) frame(ctx context.Context, f frames.Frame) {
	switch {
	case f.Type == frames.TypeDone && f.ID == a.c.id:
		a.final = f
		a.done = &a.final
		a.wake.stop()
		if a.c.leaving {
			// The cell ended: its interpreter's exit follows. An
			// interrupt's ladder no longer applies; the exit's does.
			a.esc.stop()
			a.killed, a.esc = a.killed || a.esc.killed, escalation{}
			if ctx.Err() != nil {
				a.p.cutAfter(ctx, &a.exit)
			}
		}
		return
	case f.Type == frames.TypeInterrupted:
		if f.ID == a.c.id {
			a.wake.stop() // it landed
			a.landed = true
		}
		return
	case f.Type == frames.TypeStarted && !a.started:
		a.started = true
		if a.pending {
			// The runner ignores SIGINT while idle, so an interrupt
			// sent before it started the cell would be lost.
			a.p.interruptCell(ctx, &a.wake)
		}
	}
	a.out.send(f)
}

// cancelled handles ctx's end: the cell is interrupted (once the runner
// has started it) and its ladder armed, or, once it is done, a last
// cell's exit is cut.
func (a *awaiting) cancelled(ctx context.Context) {
	// Waited for (ErrInterruptWait): the ladder waits for the deadline.
	patient := errors.Is(context.Cause(ctx), backend.ErrInterruptWait)
	if a.done != nil {
		if a.c.leaving {
			// The runner takes SIGINT during its exit, as python3
			// does: it ends the wait for threads and atexit handlers.
			// Wake-ups follow, as for a cell: one that came just
			// before the wait blocked would be lost without them.
			// Patient (python3's Ctrl-C): the exit takes the
			// KeyboardInterrupt as python3's does, an atexit
			// handler's is ignored, and how it then ends is the
			// script's (status), not cut short.
			a.p.interruptCell(ctx, &a.wake)
			a.exit.cut = !patient
			a.p.cutAfter(ctx, &a.exit)
		}
		return // it finished; only its end marks (or its exit) are still on the way
	}
	if a.started {
		a.p.interruptCell(ctx, &a.wake)
	} else {
		a.pending = true
	}
	a.p.cutAfter(ctx, &a.esc)
}

// outcome turns the end of c's stream into Execute's result.
func (p *Process) outcome(c *cell, done *frames.Frame, killed bool) (frames.Frame, error) {
	if done != nil && !killed {
		return *done, nil
	}
	// The streams ended without done: the interpreter is exiting, or closed
	// its output and is unusable.
	if !p.waitExitRunning(p.opts.Grace) {
		_ = p.signalGroup(syscall.SIGKILL)
		<-p.exited
	}
	switch {
	case killed:
		return frames.Frame{}, fmt.Errorf("cell %q: %w within %s; interpreter state lost", c.id, backend.ErrKilled, p.opts.Grace)
	case p.closing.Load():
		return frames.Frame{}, fmt.Errorf("cell %q: %w while the cell ran", c.id, backend.ErrClosed)
	default:
		return frames.Frame{}, fmt.Errorf("cell %q: %w", c.id, p.deathError())
	}
}

// interruptCell sends SIGINT to the running cell's process group (to the
// interpreter's main thread alone when ctx's cause holds
// backend.ErrInterruptAlone: kill -INT of python3's pid, which its
// children do not get) and arms the wake-ups. CPython runs a signal's handler between bytecodes in the
// main thread; a SIGINT that arrives just before a blocking call (time.sleep,
// a read), or in another thread, waits until that call returns. So until
// the runner's interrupted frame (or done) says it landed, the host sends the
// runner's main thread its wake signal (ready's "wake", a no-op handler):
// that ends the blocking call and the pending SIGINT is handled. It is not
// a second SIGINT, so a cell that took the first, its children and its own
// SIGINT handler never see another.
func (p *Process) interruptCell(ctx context.Context, w *wakeups) {
	if errors.Is(context.Cause(ctx), backend.ErrInterruptAlone) {
		if p.Alive() { // else its pid may be another process's by now
			wakeThread(p.pid, syscall.SIGINT)
		}
	} else {
		_ = p.signalGroup(syscall.SIGINT)
	}
	if p.ready.Wake > 0 {
		w.next()
	}
}

// wakeCell sends the wake signal to the runner's main thread (whose tid is
// its pid) and arms the next one. A runner that has exited is left alone:
// its pid may be another process's by now, and the wake's default action
// is to terminate.
func (p *Process) wakeCell(w *wakeups) {
	if !p.Alive() {
		w.stop()
		return
	}
	wakeThread(p.pid, syscall.Signal(p.ready.Wake))
	w.next()
}

// wakeups times the wake signals after an interrupt: 50 ms after it, then
// doubling, until stopped.
type wakeups struct {
	t     *time.Timer
	c     <-chan time.Time
	delay time.Duration
}

const firstWake = 50 * time.Millisecond

func (r *wakeups) next() {
	if r.delay == 0 {
		r.delay = firstWake
	} else {
		r.delay *= 2
	}
	if r.t == nil {
		r.t = time.NewTimer(r.delay)
	} else {
		r.t.Reset(r.delay)
	}
	r.c = r.t.C
}

func (r *wakeups) stop() {
	if r.t != nil {
		r.t.Stop()
	}
	r.c = nil
}

// escalation is the timer ladder after an interrupt: grace, then SIGTERM,
// then after termGrace SIGKILL. With limit set, the grace window starts
// once the cell's time limit has passed (cutAfter). Its steps count the
// time the interpreter could run (runTimer): a cell stopped by job control
// in its grace window (Ctrl-Z as it handles the KeyboardInterrupt) gets
// the rest of the window once continued, not a SIGTERM at once, as a
// SIGTERM handler gets the rest of termGrace; Kill still ends it at once.
type escalation struct {
	t      runTimer
	clock  *stopClock
	limit  <-chan struct{}
	grace  time.Duration
	armed  bool
	killed bool
	termed bool
}

// ladder is an escalation cutAfter arms: a cell's, or an exit's, which is
// armed once (exitWait). Its times count by clock (escalation).
type ladder interface {
	arm(clock *stopClock, d time.Duration)
	armAt(clock *stopClock, limit <-chan struct{}, grace time.Duration)
}

// cutAfter arms l for when a cell (or its exit) that has not stopped since
// ctx ended is stopped: after the grace window. An interrupt that waits
// (backend.ErrInterruptWait) waits until the cell's time limit, which
// still bounds it, and the grace window after: backend.TimeLimit's, which
// the caller may move later (sessions: while the interpreter was stopped),
// else ctx's deadline; without either, or with a deadline no timer
// reaches (sessions.NoTimeout's: adding the grace would overflow into the
// past and kill at once), for ever.
func (p *Process) cutAfter(ctx context.Context, l ladder) {
	if !errors.Is(context.Cause(ctx), backend.ErrInterruptWait) {
		l.arm(&p.stops, p.opts.Grace)
		return
	}
	if limit, ok := backend.TimeLimit(ctx); ok {
		if limit != nil {
			l.armAt(&p.stops, limit, p.opts.Grace)
		}
		return
	}
	if dl, ok := ctx.Deadline(); ok {
		if left := max(time.Until(dl), 0); left <= math.MaxInt64-p.opts.Grace {
			l.arm(&p.stops, left+p.opts.Grace)
		}
	}
}

func (e *escalation) arm(clock *stopClock, d time.Duration) {
	e.clock, e.armed = clock, true
	e.t.reset(clock, d)
}

// armAt arms the ladder's grace once limit is closed (limitPassed).
func (e *escalation) armAt(clock *stopClock, limit <-chan struct{}, grace time.Duration) {
	e.clock, e.limit, e.grace = clock, limit, grace
}

func (e *escalation) limitPassed() {
	e.limit = nil
	e.arm(e.clock, e.grace)
}

func (e *escalation) step(p *Process) {
	e.killed = true
	if !e.termed {
		e.termed = true
		p.terminate()
		e.t.reset(e.clock, p.opts.termGrace)
		return
	}
	e.t.stop()
	_ = p.signalGroup(syscall.SIGKILL)
}

func (e *escalation) stop() { e.t.stop() }
