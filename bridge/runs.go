package bridge

import (
	"context"
	"errors"
	"sync"
)

// errCellEnded is the cause of a call's cancellation when its run ended.
var errCellEnded = errors.New("cell ended")

type runKey struct{ session, run string }

// runState is one active run. n counts overlapping activations of the same
// key, so a duplicate hook pair cannot end the other's calls early.
type runState struct {
	n      int
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// runs is the set of runs executing now.
type runs struct {
	mu     sync.Mutex
	m      map[runKey]*runState
	closed bool
}

// RunHook marks run active in session (true, before the cell executes) or
// ended (false, after). It matches sessions.Config.RunHook. Ending a run
// cancels the calls it has in flight.
func (s *Server) RunHook(session, run string, active bool) {
	if active {
		s.runs.begin(runKey{session, run})
	} else {
		s.runs.end(runKey{session, run})
	}
}

func (r *runs) begin(k runKey) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	st := r.m[k]
	if st == nil {
		ctx, cancel := context.WithCancelCause(context.Background())
		st = &runState{ctx: ctx, cancel: cancel}
		r.m[k] = st
	}
	st.n++
}

func (r *runs) end(k runKey) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.m[k]
	if st == nil {
		return
	}
	if st.n--; st.n == 0 {
		delete(r.m, k)
		st.cancel(errCellEnded)
	}
}

// lookup returns the context of an active run, or false.
func (r *runs) lookup(k runKey) (context.Context, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.m[k]
	if st == nil {
		return nil, false
	}
	return st.ctx, true
}

// closeAll ends every run; later activations are ignored.
func (r *runs) closeAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for k, st := range r.m {
		delete(r.m, k)
		st.cancel(ErrClosed)
	}
}
