package sessions

import (
	"context"
	"errors"
)

// A session's close (CloseSession) stops the cell running in it at once, as
// a cancel does: interrupted, then killed after the grace window when it
// does not stop. Without this the cell was never interrupted; it ran on
// through the interpreter's graceful exit until the grace window passed and
// the interpreter was terminated, so a user who closed a session waited the
// whole window with the cell still at work.

// closedUnderCell is the message of a cell its session's close stopped.
const closedUnderCell = "stopped because its session was closed: the cell was interrupted and its interpreter shut down; its state is gone"

// holdRun makes ctx the one a close of the session cancels while the
// request holding the session's turn runs; release forgets it (a cell
// that detached runs on without it: CloseSession stops the job itself).
func (s *session) holdRun(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	s.mu.Lock()
	s.stopRun = cancel
	s.mu.Unlock()
	return ctx, func() {
		s.mu.Lock()
		s.stopRun = nil
		s.mu.Unlock()
		cancel(nil)
	}
}

// markClosed makes later requests fail at once, before shutdown stops the
// executors, and stops the running request's cell (holdRun).
func (s *session) markClosed() {
	s.mu.Lock()
	s.closed = true
	stop := s.stopRun
	s.mu.Unlock()
	if stop != nil {
		stop(ErrSessionClosed)
	}
}

// closedUnder makes a cell that the close of its session stopped say so:
// killed, its state gone, whichever way the interrupt, the grace window or
// the interpreter's exit ended it. A cell that ended before the close
// reached it keeps its own result.
func (c *cellRun) closedUnder(ctx context.Context) {
	if !errors.Is(context.Cause(ctx), ErrSessionClosed) {
		return
	}
	if c.res.Status != StatusCancelled && c.res.Status != StatusKilled {
		return
	}
	c.markLost(false)
	c.fail(StatusKilled, closedUnderCell)
}
