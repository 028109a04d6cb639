package sessions

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/evalhost/evalhost/frames"
)

// detachedJob is a cell with OnTimeout detach, from its start: until its
// timeout it is an ordinary cell whose request waits for it; at the timeout
// it detaches, the request gets a StatusDetached result, and the cell runs
// on as a job that holds its session's turn until it ends.
type detachedJob struct {
	c          *cellRun
	start      time.Time // the cell's start
	maxRuntime time.Duration
	log        jobLog
	cancel     context.CancelCauseFunc // stops the execution
	toCaller   func(frames.Frame)      // the request's emit, until it detaches

	sent      chan struct{} // closed when the cell is first sent
	sentOnce  sync.Once
	finished  chan struct{} // closed when the cell ended before it detached
	handedOff chan struct{} // closed when the Run that detached it returned
	done      chan struct{} // closed when the job ended and was settled

	mu       sync.Mutex
	id       string // set when it detaches
	detached bool
	exited   bool   // the execution returned
	reason   string // why it was stopped, for its result
	result   *CellResult
	endedAt  time.Time
}

// runDetachable runs a cell that may detach. The cell executes in a
// goroutine of the registry's; this one waits for it to end, for the
// caller's cancel (which stops it as any cell is stopped) or for its
// timeout, which detaches it.
func (c *cellRun) runDetachable(ctx context.Context, start time.Time) (CellResult, *detachedJob) {
	d := &detachedJob{c: c, start: start, maxRuntime: c.cell.maxRuntime(),
		sent: make(chan struct{}), finished: make(chan struct{}), handedOff: make(chan struct{}), done: make(chan struct{})}
	c.dj = d
	d.toCaller = c.out
	c.emit = d.route
	// The execution outlives the request once detached; until then the
	// caller's cancel reaches it through await.
	execCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	d.cancel = cancel
	reg := c.j.reg
	reg.wg.Add(1)
	go d.run(execCtx)
	if res, ok := d.await(ctx, c.timeout); ok {
		return res, d
	}
	c.finish(start)
	return c.res, nil
}

// run executes the cell and, when it detached meanwhile, settles the job.
func (d *detachedJob) run(ctx context.Context) {
	defer d.c.j.reg.wg.Done()
	defer d.cancel(nil)
	d.c.execute(ctx)
	d.mu.Lock()
	d.exited = true
	detached := d.detached
	d.mu.Unlock()
	if !detached {
		close(d.finished)
		return
	}
	d.finalize()
}

// await reports whether the cell detached, with its detached result: true
// when its timeout passed while it ran, false when it ended first (also by
// the caller's cancel).
func (d *detachedJob) await(ctx context.Context, timeout time.Duration) (CellResult, bool) {
	sent := d.sent
	timer := time.NewTimer(timeout)
	timer.Stop() // armed when the cell is sent: its timeout counts from then
	defer timer.Stop()
	for {
		select {
		case <-d.finished:
			return CellResult{}, false
		case <-ctx.Done():
			d.cancel(context.Cause(ctx))
			<-d.finished
			return CellResult{}, false
		case <-sent:
			sent = nil
			timer.Reset(timeout)
		case <-timer.C:
			if res, ok := d.detach(); ok {
				return res, true
			}
			<-d.finished // it ended as the timeout came
			return CellResult{}, false
		}
	}
}

func (d *detachedJob) markSent() { d.sentOnce.Do(func() { close(d.sent) }) }

// route passes a frame through the cell's sink, records it in the job's
// log and forwards it to the request's caller until the cell detaches
// (then the request is over and its emit must not be called again). All
// under d.mu, so the detached result's output and its JobOffset agree.
func (d *detachedJob) route(f frames.Frame) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.forward(d.c.sink.frame(f))
}

// flushHeld is cellRun.flushHeld under d.mu.
func (d *detachedJob) flushHeld() {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, f := range d.c.sink.held() {
		d.forward(f)
	}
}

func (d *detachedJob) forward(f frames.Frame) {
	d.log.frame(f)
	if !d.detached {
		d.toCaller(f)
	}
}

// detach turns the running cell into a job and returns its result for the
// request; false if the cell ended already.
func (d *detachedJob) detach() (CellResult, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.exited {
		return CellResult{}, false
	}
	d.detached = true
	d.id = d.c.j.reg.jobs.add(d, &d.c.j.reg.cfg)
	d.c.j.s.beginJob(d)
	return d.snapshot(), true
}

// detached reports whether the cell runs on as a job.
func (d *detachedJob) isDetached() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.detached
}

func (c *cellRun) detached() bool { return c.dj != nil && c.dj.isDetached() }

// snapshot is the detached cell's result for its request: the output so
// far, and where the job's output goes on. Callers hold d.mu.
func (d *detachedJob) snapshot() CellResult {
	c := d.c
	c.mu.Lock()
	lost, retried := c.res.StateLost, c.res.Retried
	c.mu.Unlock()
	return CellResult{
		Index: c.index, Language: c.cell.Language, Title: c.cell.Title,
		Status:     StatusDetached,
		DurationMs: msSince(d.start, time.Now()),
		StateLost:  lost, Retried: retried,
		Message: fmt.Sprintf("still running after its %s timeout; it runs on as job %s (for at most %s) and holds the session until it ends: read its output, wait for it or stop it",
			c.timeout, d.id, d.maxRuntime),
		Output:    c.sink.peek(),
		Job:       d.id,
		JobOffset: d.log.total(),
	}
}

// finalize settles an ended job: its result, its session's turn, the
// job-end callback. It waits for the request that detached it to return
// first, so its end never overtakes the detached result.
func (d *detachedJob) finalize() {
	<-d.handedOff
	c := d.c
	c.finish(d.start)
	res := c.res
	res.Job, res.JobOffset = d.id, d.log.total()
	d.mu.Lock()
	if d.reason != "" && (res.Status == StatusCancelled || res.Status == StatusKilled) {
		if res.Message == "" {
			res.Message = d.reason
		} else {
			res.Message = d.reason + "; " + res.Message
		}
	}
	d.mu.Unlock()
	s, reg := c.j.s, c.j.reg
	s.endJob()
	c.j.turn.release()
	if c.j.req.Mode == ModePerCall {
		reg.endPerCall(s)
	}
	d.mu.Lock()
	d.result, d.endedAt = &res, time.Now()
	d.mu.Unlock()
	reg.jobs.retire(d)
	if reg.cfg.OnJobEnd != nil {
		reg.cfg.OnJobEnd(d.info())
	}
	close(d.done)
}

// stop asks the job to stop (interrupt, grace, kill), saying why in its
// result; the first reason stays.
func (d *detachedJob) stop(reason string) {
	d.mu.Lock()
	if d.reason == "" && d.result == nil {
		d.reason = reason
	}
	d.mu.Unlock()
	d.cancel(errJobStopped)
}

func msSince(start, end time.Time) float64 {
	return float64(end.Sub(start).Microseconds()) / 1000
}
