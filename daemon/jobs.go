package daemon

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/tidwall/gjson"

	"github.com/evalhost/evalhost/serve"
	"github.com/evalhost/evalhost/sessions"
)

// Jobs (cells that went on past their timeout, from an eval with
// onTimeout "detach") are asked about with serve's ops and replies: job,
// jobs, wait, and stop with a "job" field (stop without one ends the
// process). A wait or stop runs in a goroutine of the connection, so the
// connection's other lines go on; a client that leaves ends its waits,
// not the jobs.

// maxJobWait bounds a wait's timeout, in seconds, as serve does.
const maxJobWait = 24 * 60 * 60

// jobOp answers job, jobs, wait and stop-a-job; ok is false for another op.
func (c *conn) jobOp(op, id string, line []byte) (ok bool) {
	root := gjson.ParseBytes(line)
	jobID := root.Get("job")
	switch {
	case op == "jobs":
		c.enc.Line(serve.Jobs{ID: id, Jobs: c.srv.reg.Jobs(), Type: serve.TypeJobs})
		return true
	case op == OpStop && !jobID.Exists():
		return false // the process's own stop
	case op != "job" && op != "wait" && op != OpStop:
		return false
	}
	if jobID.Type != gjson.String || jobID.Str == "" {
		c.refuse(id, op, `"job" must name a job (see the jobs op)`)
		return true
	}
	switch op {
	case "job":
		c.job(id, jobID.Str, root.Get("offset"))
	case "wait":
		t := root.Get("timeout")
		if t.Exists() && (t.Type != gjson.Number || t.Num <= 0 || t.Num > maxJobWait) {
			c.refuse(id, op, `"timeout" must be a positive number of seconds, at most 86400; leave it out to wait until the job ends`)
			return true
		}
		c.inBackground(id, op, jobID.Str, func(ctx context.Context) (sessions.JobInfo, error) {
			if t.Exists() {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, time.Duration(t.Num*float64(time.Second)))
				defer cancel()
			}
			info, err := c.srv.reg.WaitJob(ctx, jobID.Str)
			if errors.Is(err, context.DeadlineExceeded) {
				err = nil // the reply's state says the job still runs
			}
			return info, err
		})
	default:
		c.inBackground(id, op, jobID.Str, func(ctx context.Context) (sessions.JobInfo, error) {
			return c.srv.reg.StopJob(ctx, jobID.Str)
		})
	}
	return true
}

// job answers with a job's description and its output from offset on.
func (c *conn) job(id, jobID string, o gjson.Result) {
	var offset int64
	if o.Exists() {
		if o.Type != gjson.Number || o.Num < 0 || o.Num != math.Trunc(o.Num) || o.Num > 1<<53 {
			c.refuse(id, "job", `"offset" must be a whole number of bytes, 0 or more: the "next" of the last job reply`)
			return
		}
		offset = int64(o.Num)
	}
	info, err := c.srv.reg.Job(jobID, offset)
	if err != nil {
		c.refuse(id, "job", err.Error())
		return
	}
	c.enc.Line(serve.Job{ID: id, JobInfo: info, Type: serve.TypeJob})
}

// inBackground answers with what do returns, from a goroutine the
// connection waits for; the client's leaving cancels its ctx. An unknown
// job is refused at once, in line order.
func (c *conn) inBackground(id, op, jobID string, do func(context.Context) (sessions.JobInfo, error)) {
	info, err := c.srv.reg.Job(jobID, 0)
	if errors.Is(err, sessions.ErrNoJob) {
		c.refuse(id, op, err.Error())
		return
	}
	// A client waiting on the job when the process ends is told that it
	// ended with it (the stopping line), and so of its session's state.
	key := sessions.Key{Session: info.Session, Cwd: info.Cwd}
	beforeTaken(c.ctx, op, id)
	c.mu.Lock()
	c.jobsAsked[key]++
	late := c.ending
	c.mu.Unlock()
	if late {
		// Read as the process ended, after end counted what was asked:
		// the refusal its cancelled ctx gets tells the client it ended.
		c.srv.addTold(key)
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer func() {
			c.mu.Lock()
			if c.jobsAsked[key]--; c.jobsAsked[key] == 0 {
				delete(c.jobsAsked, key)
			}
			c.mu.Unlock()
		}()
		info, err := do(c.ctx)
		if err != nil {
			c.refuse(id, op, err.Error())
			return
		}
		c.enc.Line(serve.Job{ID: id, JobInfo: info, Type: serve.TypeJob})
	}()
}
