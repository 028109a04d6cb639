package serve

import (
	"context"
	"fmt"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/sessions"
)

// handled are the ops that queue work (see preempted): the reader checks
// the line and takes the request's place in its session's queue, in the
// order the lines arrived, and returns the rest of the work (nil when the
// request was refused), which the reading goroutine then runs (reader.go).
// The Server's wg counts the work from then on (dispatch adds it).
var handled = map[string]func(*Server, request) func(){
	"eval":  (*Server).eval,
	"reset": (*Server).reset,
}

// inflight is an eval request that has not sent its end line yet.
type inflight struct {
	cancel    context.CancelFunc
	cell      int           // the running cell, -1 while queued or between cells
	cellStart time.Time     // when it started
	ended     chan struct{} // closed once its end (or request_error) is written
}

func (s *Server) eval(r request) func() {
	req, perr := parseEval(r.root)
	if perr != nil {
		s.requestError(perr)
		return nil
	}
	id := req.ID
	ctx, cancel := context.WithCancel(s.work)
	s.mu.Lock()
	if _, dup := s.inflight[id]; dup {
		s.mu.Unlock()
		cancel()
		s.requestError(&requestError{id: id, op: r.op, inFlight: true,
			msg: fmt.Sprintf("request id %q is already in flight; use a new id", id)})
		return nil
	}
	fl := &inflight{cancel: cancel, cell: -1, ended: make(chan struct{})}
	s.inflight[id] = fl
	s.mu.Unlock()
	lastCell := len(req.Cells) - 1
	req.OnCellEnd = func(res sessions.CellResult) { s.cellEnd(id, res, res.Index == lastCell) }
	// Queue now, in the reader's order, so one session's requests run in the
	// order they arrived; running them is the work returned.
	job, err := s.reg.Queue(req)
	if err != nil {
		s.finish(id)
		cancel()
		s.requestError(&requestError{id: id, op: r.op, msg: err.Error()})
		return nil
	}
	s.accept()
	return func() {
		defer close(fl.ended)
		defer cancel()
		start := time.Now()
		res, err := job.Run(ctx, func(cell int, f frames.Frame) { s.frame(id, fl, cell, &f) })
		s.finish(id)
		if err != nil {
			s.answerError(&requestError{id: id, op: r.op, msg: err.Error()})
			return
		}
		written := s.answers.Answering()
		written(s.out.End(id, res, time.Since(start)))
	}
}

func (s *Server) frame(id string, fl *inflight, cell int, f *frames.Frame) {
	if s.cfg.Trace != nil {
		s.cfg.Trace(cell, *f)
	}
	if f.Type == frames.TypeStarted {
		s.mu.Lock()
		fl.cell, fl.cellStart = cell, time.Now()
		s.mu.Unlock()
	}
	s.out.Frame(id, cell, f)
}

func (s *Server) cellEnd(id string, res sessions.CellResult, last bool) {
	s.holdJobEnd(id, res)
	s.mu.Lock()
	if fl := s.inflight[id]; fl != nil {
		fl.cell = -1
	}
	s.mu.Unlock()
	// The last cell's cell_end is followed at once by the request's end.
	s.out.CellEnd(id, res, last)
}

func (s *Server) finish(id string) {
	s.mu.Lock()
	delete(s.inflight, id)
	s.mu.Unlock()
}

// reset restarts a session's interpreters in queue order.
func (s *Server) reset(r request) func() {
	var id, session, cwd string
	for _, f := range []struct {
		name     string
		required bool
		dst      *string
	}{{"id", false, &id}, {"session", true, &session}, {"cwd", false, &cwd}} {
		if e := stringField(r.root, f.name, f.required, f.dst); e != nil {
			s.requestError(e)
			return nil
		}
	}
	s.accept()
	return func() {
		existed, err := s.reg.ResetSession(s.work, session, cwd)
		if err != nil {
			s.answerError(&requestError{id: id, op: r.op, msg: "reset failed: " + err.Error()})
			return
		}
		s.answer(Reset{Existed: existed, ID: id, OK: true, Session: session, Type: TypeReset})
	}
}

// startProgress sends a progress line for every running cell each
// Config.Progress, until stop (which waits for it).
func (s *Server) startProgress() (stop func()) {
	if s.cfg.Progress <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(s.cfg.Progress)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				s.progress(now)
			}
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}

func (s *Server) progress(now time.Time) {
	var ticks []Progress
	s.mu.Lock()
	for id, fl := range s.inflight {
		if fl.cell >= 0 {
			ticks = append(ticks, Progress{Cell: fl.cell, ElapsedMs: now.Sub(fl.cellStart).Milliseconds(), ID: id, Type: TypeProgress})
		}
	}
	s.mu.Unlock()
	for _, t := range ticks {
		s.notice(t)
	}
}
