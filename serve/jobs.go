package serve

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/tidwall/gjson"

	"github.com/evalhost/evalhost/sessions"
)

// Jobs are cells that outlived their timeout with onTimeout "detach"
// (package sessions): job, jobs, wait and stop ask about them; every job's
// end is a job_end line, whatever the client is doing.

// maxJobWait bounds a wait's timeout, in seconds: a job runs at most 24 h.
const maxJobWait = 24 * 60 * 60

// jobOps are preempted: job and jobs answer at once; wait and stop start a
// goroutine the Server waits for after the registry closed (which ends
// every job), so a pending wait never holds a shutdown up.
func init() {
	preempted["job"] = (*Server).job
	preempted["jobs"] = (*Server).jobs
	preempted["wait"] = (*Server).waitJob
	preempted["stop"] = (*Server).stopJob
}

// job answers with a job's status and its output from "offset" on.
func (s *Server) job(req request) {
	var jobID string
	if e := stringField(req.root, "job", true, &jobID); e != nil {
		s.requestError(e)
		return
	}
	var offset int64
	if o := req.root.Get("offset"); o.Exists() {
		// Up to 2^53, where a JSON number stops being exact.
		if o.Type != gjson.Number || o.Num < 0 || o.Num != math.Trunc(o.Num) || o.Num > 1<<53 {
			s.requestError(badRequest(req.root, `"offset" must be a whole number of bytes, 0 or more: the "next" of the last job reply, or a cell_end's "jobOffset"`))
			return
		}
		offset = int64(o.Num)
	}
	info, err := s.reg.Job(jobID, offset)
	if err != nil {
		s.requestError(&requestError{id: req.id, op: req.op, msg: err.Error()})
		return
	}
	s.reply(Job{ID: req.id, JobInfo: info, Type: TypeJob})
}

func (s *Server) jobs(req request) {
	s.reply(Jobs{ID: req.id, Jobs: s.reg.Jobs(), Type: TypeJobs})
}

// waitJob answers when the job ends, or when "timeout" seconds passed
// (its state is then still running).
func (s *Server) waitJob(req request) {
	var jobID string
	if e := stringField(req.root, "job", true, &jobID); e != nil {
		s.requestError(e)
		return
	}
	timeout := time.Duration(0)
	if t := req.root.Get("timeout"); t.Exists() {
		if t.Type != gjson.Number || t.Num <= 0 || t.Num > maxJobWait {
			s.requestError(badRequest(req.root, `"timeout" must be a positive number of seconds, at most %d; leave it out to wait until the job ends`, maxJobWait))
			return
		}
		timeout = seconds(t.Num)
	}
	s.inBackground(req, func(ctx context.Context) (sessions.JobInfo, error) {
		if timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		info, err := s.reg.WaitJob(ctx, jobID)
		if errors.Is(err, context.DeadlineExceeded) {
			err = nil // the reply's state says the job still runs
		}
		return info, err
	}, jobID)
}

// stopJob stops a job (interrupt, grace, kill) and answers once it ended.
func (s *Server) stopJob(req request) {
	var jobID string
	if e := stringField(req.root, "job", true, &jobID); e != nil {
		s.requestError(e)
		return
	}
	s.inBackground(req, func(ctx context.Context) (sessions.JobInfo, error) {
		return s.reg.StopJob(ctx, jobID)
	}, jobID)
}

// inBackground answers req with what do returns, from a goroutine the
// Server waits for. An unknown job is refused at once, in line order.
func (s *Server) inBackground(req request, do func(context.Context) (sessions.JobInfo, error), jobID string) {
	if _, err := s.reg.Job(jobID, 0); errors.Is(err, sessions.ErrNoJob) {
		s.requestError(&requestError{id: req.id, op: req.op, msg: err.Error()})
		return
	}
	s.jobWG.Add(1)
	s.accept()
	go func() {
		defer s.jobWG.Done()
		// Not s.work: when the work ends at once the registry kills every
		// job, and a wait then answers with the job's end, not a cancel.
		// Every job ends by the registry's Close, which Serve waits for
		// before it waits for these.
		info, err := do(context.Background())
		if err != nil {
			s.answerError(&requestError{id: req.id, op: req.op, msg: err.Error()})
			return
		}
		s.answer(Job{ID: req.id, JobInfo: info, Type: TypeJob})
	}()
}

// holdJobEnd makes the job_end of the job a detached cell runs on as wait
// for its request's end line, which the registry cannot order: it calls
// OnJobEnd once Run returned, while the end is written after.
func (s *Server) holdJobEnd(id string, res sessions.CellResult) {
	if res.Status != sessions.StatusDetached {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if fl := s.inflight[id]; fl != nil {
		s.jobEnds[res.Job] = fl.ended
	}
}

// jobEnded writes a job's job_end line.
func (s *Server) jobEnded(info sessions.JobInfo) {
	s.mu.Lock()
	ended := s.jobEnds[info.ID]
	delete(s.jobEnds, info.ID)
	s.mu.Unlock()
	if ended != nil {
		<-ended
	}
	s.notice(JobEnd{JobInfo: info, Type: TypeJobEnd})
}

func chainJobEnd(first, then func(sessions.JobInfo)) func(sessions.JobInfo) {
	if then == nil {
		return first
	}
	return func(info sessions.JobInfo) {
		first(info)
		then(info)
	}
}

// drainJobs lets the running jobs end on their own when Config.DrainJobs
// asks for it; the end of ctx meanwhile ends the work at once. It reports
// whether ctx did.
func (s *Server) drainJobs(ctx context.Context) (aborted bool) {
	if !s.cfg.DrainJobs {
		return false
	}
	if err := s.reg.DrainJobs(ctx); err != nil {
		s.endAtOnce()
		return true
	}
	return false
}
