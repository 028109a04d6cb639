package backend

import "context"

type timeLimitKey struct{}

// WithTimeLimit returns ctx carrying the cell's time limit as its caller
// counts it: passed is closed once the limit is reached, and a nil passed
// is no limit. A caller whose limit is no fixed instant gives it so
// (sessions: a cell's timeout does not count the time its interpreter
// spent stopped by job control, so the limit moves later while it is
// stopped); ctx then has no deadline of its own for it. A backend waiting
// within the cell's time (an interrupt cancelled with ErrInterruptWait)
// waits for passed, not for ctx's deadline (TimeLimit).
func WithTimeLimit(ctx context.Context, passed <-chan struct{}) context.Context {
	return context.WithValue(ctx, timeLimitKey{}, passed)
}

// TimeLimit is the limit WithTimeLimit put in ctx, ok false when none was:
// the backend then takes ctx's deadline as the limit, if any.
func TimeLimit(ctx context.Context) (passed <-chan struct{}, ok bool) {
	passed, ok = ctx.Value(timeLimitKey{}).(<-chan struct{})
	return passed, ok
}
