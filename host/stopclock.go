package host

import (
	"sync"
	"time"
)

// The time the interpreter is stopped by job control (SignalGroup's
// SIGSTOP, until its SIGCONT: sessions' Suspend and Resume) is time it
// could not run, and the host's waits for what the interpreter does do not
// count it, as the cell's timeout does not (sessions holds it): the pump's
// wait for a cell's late end marks (markWait) and for position marks
// (posWait), an interrupt's grace window and the SIGTERM's termGrace after
// it (escalation, a last cell's exitWait), and the waits for an exit whose
// output has ended (waitExitRunning). A one-shot `evalhost run` stops
// itself right after its interpreter: a wait armed before, for marks the
// runner had written but the host not yet read, would otherwise end the
// moment both are continued, with those marks still in the pipe (a warning
// that the cell's output may be incomplete), and a Ctrl-Z as a cell
// handled its KeyboardInterrupt had it killed in the stop. Close's waits
// count wall time: a close must end an interpreter that stays stopped.
// Close continues a stopped interpreter before its exit request, and
// SIGTERM, Close's or the ladder's, is followed by SIGCONT (terminate), as
// a shell's kill %1 of a stopped job: a stopped interpreter can neither
// read the request nor run a SIGTERM handler. Both go through SignalGroup,
// so the clock sees the stop end.

// stopClock is how long the interpreter's process group has been stopped.
// Only SignalGroup changes it. Its zero value is a group that runs.
type stopClock struct {
	mu    sync.Mutex
	since time.Time     // when the stop under way began; zero while it runs
	total time.Duration // the stops before it
	// resumed is closed by the SIGCONT that ends the stop under way (nil
	// while the group runs): every timer held over the stop (runTimer.R)
	// is armed again at it, whoever waits on it.
	resumed chan struct{}
}

// stop: the group was sent SIGSTOP.
func (c *stopClock) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.since.IsZero() {
		c.since = time.Now()
		c.resumed = make(chan struct{})
	}
}

// cont: the group was sent SIGCONT.
func (c *stopClock) cont() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.since.IsZero() {
		return
	}
	c.total += time.Since(c.since)
	c.since = time.Time{}
	close(c.resumed)
	c.resumed = nil
}

// stopped returns how long the group has been stopped in all, the stop
// under way included, and, while it is stopped, the channel its SIGCONT
// closes (nil while it runs).
func (c *stopClock) stopped() (time.Duration, <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.since.IsZero() {
		return c.total, nil
	}
	return c.total + time.Since(c.since), c.resumed
}

// runTimer is a timer that counts only the time the interpreter could run
// (stopClock). Its owner selects on C and R, and calls expired when C
// fires (true: the time is up) and resume when R does. The zero runTimer
// is stopped; it is not safe for concurrent use (one goroutine owns it).
type runTimer struct {
	C       <-chan time.Time // fires when the time may be up; nil while not armed, or held over a stop
	R       <-chan struct{}  // while held over a stop: closed at its SIGCONT; else nil
	t       *time.Timer
	clock   *stopClock
	d       time.Duration
	armed   time.Time     // when reset armed it
	stopped time.Duration // clock's stopped time then
}

// reset arms t for d of run time, counted by clock from now.
func (t *runTimer) reset(clock *stopClock, d time.Duration) {
	t.clock, t.d, t.R = clock, d, nil
	t.armed = time.Now()
	t.stopped, _ = clock.stopped()
	t.arm(d)
}

func (t *runTimer) arm(d time.Duration) {
	if t.t == nil {
		t.t = time.NewTimer(d)
	} else {
		t.t.Reset(d)
	}
	t.C = t.t.C
}

// stop disarms t.
func (t *runTimer) stop() {
	if t.t != nil {
		t.t.Stop()
	}
	t.disarm()
}

// disarm makes t fire no more without stopping its timer, for a hot path:
// the next reset (which clears the timer's channel) or stop does.
func (t *runTimer) disarm() { t.C, t.R = nil, nil }

// active says whether t is armed, or held over a stop.
func (t *runTimer) active() bool { return t.C != nil || t.R != nil }

// left is the run time still to wait, and, while the interpreter is
// stopped, the channel its SIGCONT closes.
func (t *runTimer) left() (time.Duration, <-chan struct{}) {
	stopped, resumed := t.clock.stopped()
	return t.d - (time.Since(t.armed) - (stopped - t.stopped)), resumed
}

// expired is called when C fired: whether d of run time has passed. If
// not, t is armed for what is left, or, while the interpreter is stopped,
// held until its SIGCONT (R).
func (t *runTimer) expired() bool {
	t.C = nil
	left, resumed := t.left()
	switch {
	case resumed != nil:
		t.R = resumed
	case left > 0:
		t.arm(left)
	default:
		return true
	}
	return false
}

// resume is called when R was closed: t, held over a stop, is armed for
// the run time it has left (C fires at once if none), or held again if
// the interpreter was stopped again since.
func (t *runTimer) resume() {
	t.R = nil
	left, resumed := t.left()
	if resumed != nil {
		t.R = resumed
		return
	}
	t.arm(max(left, 0))
}
