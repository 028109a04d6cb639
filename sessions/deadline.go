package sessions

import (
	"context"
	"sync"
	"time"

	"github.com/evalhost/evalhost/backend"
)

// runDeadline is a cell's time limit counted in the time its interpreter
// could run: held while the interpreter is stopped (Registry.Suspend, a
// Ctrl-Z) until it is continued (Registry.Resume). A context deadline is
// a fixed instant, and a run stopped for longer than a cell's timeout
// would time the cell out the moment it was continued; the process's own
// CPU time is no measure either (a cell that waits uses none). So a
// timer runs while the interpreter does, and is stopped, the time used so
// far kept, while it does not.
type runDeadline struct {
	mu     sync.Mutex
	limit  time.Duration
	used   time.Duration // run time before the current spell
	since  time.Time     // the current spell's start; zero while held
	timer  *time.Timer   // nil: no limit (NoTimeout)
	ended  bool          // passed, or the cell is over (stop)
	passed chan struct{} // closed when the limit is reached
	expire func()
}

// withRunDeadline returns ctx cancelled with errTimedOut once the cell has
// run for limit (NoTimeout: never), and carrying that limit for the
// backend (backend.WithTimeLimit), which waits for it after an interrupt
// it was asked to wait on. held starts it stopped (its interpreter is).
// stop releases the timer, once the cell is over.
func withRunDeadline(ctx context.Context, limit time.Duration, held bool) (context.Context, *runDeadline, context.CancelFunc) {
	cellCtx, cancel := context.WithCancelCause(ctx)
	d := &runDeadline{limit: limit, passed: make(chan struct{}), expire: func() { cancel(errTimedOut) }}
	if !held {
		d.since = time.Now()
	}
	var passed <-chan struct{} // nil: no limit
	if limit != NoTimeout {
		passed = d.passed
		d.timer = time.AfterFunc(limit, d.fire)
		if held {
			d.timer.Stop()
		}
	}
	return backend.WithTimeLimit(cellCtx, passed), d, func() { d.stop(); cancel(nil) }
}

// fire ends the cell's time once it has run for its limit; a timer that
// fired as the interpreter was stopped (or continued) finds the limit
// not reached, and is set again for what is left, or left to resume.
func (d *runDeadline) fire() {
	d.mu.Lock()
	if d.ended || d.since.IsZero() {
		d.mu.Unlock()
		return
	}
	if left := d.limit - d.used - time.Since(d.since); left > 0 {
		d.timer.Reset(left)
		d.mu.Unlock()
		return
	}
	d.ended = true
	close(d.passed)
	d.mu.Unlock()
	d.expire()
}

// hold stops the clock: the interpreter was stopped.
func (d *runDeadline) hold() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ended || d.since.IsZero() {
		return
	}
	d.used += time.Since(d.since)
	d.since = time.Time{}
	if d.timer != nil {
		d.timer.Stop()
	}
}

// resume starts the clock again with the time that is left.
func (d *runDeadline) resume() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ended || !d.since.IsZero() {
		return
	}
	d.since = time.Now()
	if d.timer != nil {
		d.timer.Reset(max(d.limit-d.used, 0))
	}
}

// stop ends the deadline: the cell is over.
func (d *runDeadline) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ended = true
	if d.timer != nil {
		d.timer.Stop()
	}
}
