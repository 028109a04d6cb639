package host

import (
	"fmt"
	"slices"
	"time"

	"github.com/evalhost/evalhost/frames"
)

// A cell sent after ExitAfterNextCell is its interpreter's last, and what
// the interpreter writes on fd 1 and 2 after the cell's end marks (atexit
// handlers, finalizers, a non-daemon thread's last prints, text flushed at
// exit) has no later cell to go to: it is the last cell's output. The pump
// sends it behind the cell's done frame, and Execute relays it until the
// streams end, so it reaches the caller before Execute returns, as the
// cell's stdout and stderr, after everything the cell itself wrote. The
// runner keeps the last cell's position marks going as it exits, so the
// two streams keep their order there too.

// exitText keeps text a last cell's interpreter wrote after the cell's end
// mark on fd until the cell is complete: text of the cell's own may still
// be on its way on the other fd.
func (r *router) exitText(fd int, f frames.Frame) {
	c := r.cur
	if fd == 2 || r.p.opts.MergeStderr {
		r.p.tail.Write([]byte(f.Data))
	}
	f.ID, f.Data = c.id, r.p.own(fd, f.Data)
	c.after = append(c.after, heldText{epoch: c.posSeen[fd], frame: f})
}

// beginExit starts a complete last cell's exit: from here its output is
// routed as a running cell's, behind the position marks and sync frames
// the runner writes as it exits (core._exit_fast), so stdout and stderr
// keep the order they were written in. Until the streams end, the fds
// are not marked ended.
func (r *router) beginExit() {
	c := r.cur
	c.exiting = true
	c.marked[1], c.marked[2] = r.eof[1], r.eof[2]
	// Text still held is past the cell's last frame, so the exit's: read
	// before done on a pipe done left unmarked, so before what after holds
	// of that pipe. Each pipe's text is thus in arrival order; a later
	// epoch is text after a later mark, so a stable sort by epoch puts each
	// fd's text after the other's before it.
	exit := append(c.takeHeld(), c.after...)
	slices.SortStableFunc(exit, func(a, b heldText) int { return a.epoch - b.epoch })
	c.after = nil
	for _, h := range exit {
		c.hold(h)
	}
	r.releaseHeld(false)
	r.release() // the exit's frames, by their own marks now
}

// sendAfter sends exit-time text held for a last cell that never became
// complete (its streams ended first), as it was read.
func (r *router) sendAfter() {
	c := r.cur
	for _, h := range c.after {
		c.out <- h.frame
	}
	c.after = nil
}

// exitWait bounds a last cell's wait for its interpreter to exit. The wait
// is part of the cell and lasts while the cell's context does, as
// `python3 -c` waits for non-daemon threads; once the context has ended
// (the cell's timeout, an interrupt) the interpreter gets SIGINT, which
// ends its wait for threads and an atexit handler as Ctrl-C ends python3's,
// then Options.Grace to exit, then SIGTERM and, termGrace later, SIGKILL,
// as Close would give it.
type exitWait struct {
	escalation      // the ladder after an interrupt, armed once here
	cut        bool // the context ended (not patiently) while the interpreter was exiting
}

func (w *exitWait) arm(clock *stopClock, d time.Duration) {
	if !w.armed && w.limit == nil {
		w.escalation.arm(clock, d)
	}
}

func (w *exitWait) armAt(clock *stopClock, limit <-chan struct{}, grace time.Duration) {
	if !w.armed && w.limit == nil {
		w.escalation.armAt(clock, limit, grace)
	}
}

// step stops the interpreter that outlived the wait, saying so in the cell's
// output first.
func (w *exitWait) step(p *Process, id string, out relay) {
	w.cut = true // a patient interrupt's wait too, at the deadline
	if !w.termed {
		out.send(frames.Frame{Type: frames.TypeWarning, ID: id, Message: fmt.Sprintf(
			"the interpreter was still running %s after its last cell's time ran out (a non-daemon thread or an atexit handler); it was stopped, and what it would have printed after this is lost",
			p.opts.Grace)})
	}
	w.escalation.step(p)
}

// status tells how a last cell's interpreter ended when it was not
// cleanly, making the cell an error (with the exit's status, done.Exit and
// ExitStatus, when it exited itself): `python3 -c` exits with what an atexit
// handler passed to os._exit, or dies of a signal a finalizer raised, and a
// cell reported ok would hide that. The streams have ended, so the exit is
// near; an interpreter that lives on past termGrace of run time (it closed its
// output) is Close's to stop, unreported. One whose exit the host cut
// (SIGINT, then the ladder) ended as the host made it, and the cell already
// reads cancelled.
func (w *exitWait) status(p *Process, done *frames.Frame, out relay) {
	if w.cut || w.termed || p.closing.Load() || !p.waitExitRunning(p.opts.termGrace) || p.closing.Load() {
		return
	}
	var how string
	exited := false // its own exit with a status: python3's, as sys.exit's
	signum := 0     // the signal it died of: python3's death too
	switch st := p.status; {
	case st.Signaled():
		how = fmt.Sprintf("was killed by signal %d (%s)", int(st.Signal()), st.Signal())
		signum = int(st.Signal())
	case st.ExitStatus() != 0:
		how = fmt.Sprintf("exited with status %d", st.ExitStatus())
		exited = true
	default:
		return
	}
	const ename = "InterpreterExit"
	evalue := "the interpreter " + how + " as it ended, after its last cell had finished (an atexit handler, finalizer or non-daemon thread)"
	// A one-line traceback, as a notebook shows an error by its traceback.
	out.send(frames.Frame{Type: frames.TypeError, ID: done.ID, Ename: ename, Evalue: evalue,
		Traceback: []string{ename + ": " + evalue}, Exit: exited, Signal: signum})
	done.Status, done.Signal = frames.StatusError, signum
	if exited {
		// os._exit(N) there ends python3 with N, over a sys.exit's status
		// (whose message, if any, python3 printed before): the script's.
		done.Exit, done.ExitStatus = true, p.status.ExitStatus()
	}
}

// status's wait for an exit whose output has ended is termGrace of run
// time (waitExitRunning): an exit takes well under it, and Close gives one
// that does not its own grace, which this wait must not double. A Ctrl-Z
// as the interpreter exits does not make its status go unreported.
