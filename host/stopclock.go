package host

import (
	"sync"
	"time"
)

// The time the interpreter is stopped by job control (SignalGroup's
// SIGSTOP, until its SIGCONT: sessions' Suspend and Resume) is time it
// could not run, and the pump's wait for a cell's late end marks does not
// count it, as the cell's timeout does not (sessions holds it). A one-shot
// `evalhost run` stops itself right after its interpreter: a wait armed
// before, for marks the runner had written but the host not yet read,
// would otherwise end the moment both are continued, with those marks
// still in the pipe (a warning that the cell's output may be incomplete).

// stopClock is how long the interpreter's process group has been stopped.
// Only SignalGroup changes it.
type stopClock struct {
	mu    sync.Mutex
	since time.Time     // when the stop under way began; zero while it runs
	total time.Duration // the stops before it
	// resumed (buffered, 1) takes a token at each SIGCONT that ended a
	// stop (one is enough), so the pump arms a wait again that it held
	// over the stop.
	resumed chan struct{}
}

// stop: the group was sent SIGSTOP.
func (c *stopClock) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.since.IsZero() {
		c.since = time.Now()
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
	select {
	case c.resumed <- struct{}{}:
	default:
	}
}

// stopped returns how long the group has been stopped in all, the stop
// under way included, and whether it is stopped now.
func (c *stopClock) stopped() (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.since.IsZero() {
		return c.total, false
	}
	return c.total + time.Since(c.since), true
}

// runTimer is a timer of the pump's that counts only the time the
// interpreter could run (stopClock). C fires when the time may be up;
// expired then says whether it is. The zero runTimer is stopped.
type runTimer struct {
	C       <-chan time.Time // nil while not armed, or held over a stop
	t       *time.Timer
	clock   *stopClock
	d       time.Duration
	armed   time.Time     // when reset armed it
	stopped time.Duration // clock's stopped time then
	held    bool          // it fired during a stop: resume arms it again
}

// reset arms t for d of run time, counted by clock from now.
func (t *runTimer) reset(clock *stopClock, d time.Duration) {
	t.clock, t.d, t.held = clock, d, false
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

func (t *runTimer) stop() {
	if t.t != nil {
		t.t.Stop()
	}
	t.C, t.held = nil, false
}

// left is the run time still to wait, and whether the interpreter is
// stopped now.
func (t *runTimer) left() (time.Duration, bool) {
	stopped, now := t.clock.stopped()
	return t.d - (time.Since(t.armed) - (stopped - t.stopped)), now
}

// expired is called when C fired: whether d of run time has passed. If
// not, t is armed for what is left, or, while the interpreter is stopped,
// held until resume.
func (t *runTimer) expired() bool {
	t.C = nil
	left, stopped := t.left()
	switch {
	case stopped:
		t.held = true
	case left > 0:
		t.arm(left)
	default:
		return true
	}
	return false
}

// resume arms a timer held over a stop for the run time it has left
// (C fires at once if none), after a SIGCONT.
func (t *runTimer) resume() {
	if !t.held {
		return
	}
	left, stopped := t.left()
	if stopped {
		return // stopped again since: the next SIGCONT resumes it
	}
	t.held = false
	t.arm(max(left, 0))
}
