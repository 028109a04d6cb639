package backend

import (
	"context"

	"github.com/evalhost/evalhost/frames"
)

// Executor is one live interpreter: the runner process (package host), the
// sh shell or a gateway kernel. The package comment is its contract.
type Executor interface {
	// Execute runs req as one cell, emitting its frames and returning its
	// done frame.
	Execute(ctx context.Context, req frames.Request, emit func(frames.Frame)) (frames.Frame, error)
	Ready() frames.Frame // the ready frame it started with
	// Interrupt asks the running cell, if any, to stop; it does not wait.
	Interrupt() error
	Alive() bool           // false once it ended, however
	Done() <-chan struct{} // closed once it ended, however
	Close() error          // ends it gently; waits for its goroutines
	Kill() error           // ends it now; waits for its goroutines
}
