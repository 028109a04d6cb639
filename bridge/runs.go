package bridge

import (
	"context"
	"errors"
	"sync"
)

// errCellEnded is the cause of a call's cancellation when its run ended.
var errCellEnded = errors.New("cell ended")

type runKey struct{ session, run string }

// Run is one execution of a cell: the run the interpreter reports
// (PI_TOOL_BRIDGE_SESSION, EVALHOST_RUN) and, for a client that names them
// (serve's tool_call lines), the request and cell it belongs to.
type Run struct {
	Session string // PI_TOOL_BRIDGE_SESSION
	ID      string // EVALHOST_RUN
	Request string // the client's request id; may be empty
	Cell    int    // the cell's index in its request
}

// runState is one active run. n counts overlapping activations of the same
// key, so a duplicate hook pair cannot end the other's calls early. Its
// context is made by the first call's lookup: most cells call no tool, and
// a context per run was a sixth of the hook's cost.
type runState struct {
	n      int
	run    Run
	ctx    context.Context // nil until a call comes
	cancel context.CancelCauseFunc
}

// stop ends the run's calls, if it had any, with cause.
func (st *runState) stop(cause error) {
	if st.cancel != nil {
		st.cancel(cause)
	}
}

// runs is the set of runs executing now.
type runs struct {
	mu     sync.Mutex
	m      map[runKey]*runState
	closed bool
}

// RunHook marks run active in session (true, before the cell executes) or
// ended (false, after): TrackRun without a request and cell.
func (s *Server) RunHook(session, run string, active bool) {
	s.TrackRun(Run{Session: session, ID: run}, active)
}

// TrackRun marks run active (true, before its cell executes) or ended (false,
// after); calls from it carry its Request and Cell to the Tools. It matches
// sessions.Config.RunHook. Ending a run cancels the calls it has in flight.
func (s *Server) TrackRun(run Run, active bool) {
	if active {
		s.runs.begin(run)
	} else {
		s.runs.end(runKey{run.Session, run.ID})
	}
}

func (r *runs) begin(run Run) {
	k := runKey{run.Session, run.ID}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	st := r.m[k]
	if st == nil {
		st = &runState{run: run}
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
		st.stop(errCellEnded)
	}
}

// lookup returns an active run and its context, or false.
func (r *runs) lookup(k runKey) (Run, context.Context, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := r.m[k]
	if st == nil {
		return Run{}, nil, false
	}
	if st.ctx == nil {
		st.ctx, st.cancel = context.WithCancelCause(context.Background())
	}
	return st.run, st.ctx, true
}

// closeAll ends every run; later activations are ignored.
func (r *runs) closeAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.closed = true
	for k, st := range r.m {
		delete(r.m, k)
		st.stop(ErrClosed)
	}
}
