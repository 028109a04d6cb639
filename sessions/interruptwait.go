package sessions

import (
	"context"
	"errors"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
)

// tookInterrupt says whether a cell that ended with done took an interrupt
// its caller waited for (ctx cancelled with backend.ErrInterruptWait): the
// KeyboardInterrupt was raised in the cell (done.Interrupted), which caught
// it and ended ok. python3 goes on past such an `except
// KeyboardInterrupt:`, so the request's later cells run (Job.Run). One that
// never landed (the cell ended first) is still owed: the later cells are
// not started, as python3 would raise it at its next statement.
func tookInterrupt(ctx context.Context, done frames.Frame) bool {
	return errors.Is(context.Cause(ctx), backend.ErrInterruptWait) && done.Interrupted &&
		!done.Cancelled && done.Status == frames.StatusOK
}

// afterInterrupt is the context of the cells after one that took the
// caller's interrupt: ctx's values without its cancellation, which that
// cell spent. The caller ends them by other means (Kill), as a second
// Ctrl-C does.
func afterInterrupt(ctx context.Context) context.Context {
	return context.WithoutCancel(ctx)
}
