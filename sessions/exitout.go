package sessions

import (
	"context"

	"github.com/evalhost/evalhost/frames"
)

// exitSkipped lets each interpreter of a per-call request whose last cell
// did not run (a failure skipped it) leave the way a last cell's does, so
// what it prints as it exits (atexit handlers, finalizers, threads) is not
// lost when the request ends: an empty cell is sent with the exit request
// behind it (lastCellTeller), and the exit's stdout, stderr and warnings
// go to emit tagged with the last cell of that language that ran, after
// its end. Its timeout is the skipped last cell's. A cancelled request's
// interpreters are closed as before, and their exit output dropped.
func (j *Job) exitSkipped(ctx context.Context, res *Result, last map[string]int, emit Emit) {
	for lang, li := range last {
		if ctx.Err() != nil || res.Cells[li].Status != StatusSkipped {
			continue
		}
		ran := -1
		for i := li; i >= 0; i-- {
			if j.req.Cells[i].Language == lang && res.Cells[i].Status != StatusSkipped {
				ran = i
				break
			}
		}
		ex := j.s.current(lang)
		l, ok := ex.(lastCellTeller)
		if ran < 0 || !ok || !ex.Alive() {
			continue
		}
		sink := j.newSink()
		exitCtx, cancel := j.s.startDeadline(ctx, ClampTimeout(j.req.Cells[li].Timeout, j.reg.cfg.DefaultTimeout), lang)
		l.ExitAfterNextCell()
		// A script's exit is python3's (frames.Request.Last): what its
		// streams could not write is reported as the exit's.
		req := frames.Request{ID: j.req.ID + "-exit-" + newRunNonce(), InScript: lang == LangPython && j.req.Argv != nil}
		done, err := ex.Execute(exitCtx, req, func(f frames.Frame) {
			switch f.Type {
			case frames.TypeStdout, frames.TypeStderr, frames.TypeWarning:
				emit(ran, sink.frame(f))
			}
		})
		cancel()
		for _, f := range sink.held() {
			emit(ran, f)
		}
		if err == nil && j.req.Batch && lang == LangPython {
			res.settleExit(ran, done)
		}
	}
}

// settleExit gives a batch the status its Python interpreter's exit after
// cell ran says (the host's InterpreterExit: an atexit handler's
// os._exit(N), python3's 120 for streams it could not flush, a signal it
// died of), as a last cell that ran gets it (host.Process.ExitAfterNextCell):
// python3's process would end so. Its cell fails, if it had not; one
// that ended otherwise than by its own code (a timeout) keeps that.
func (res *Result) settleExit(ran int, done frames.Frame) {
	cr := &res.Cells[ran]
	if done.Status != frames.StatusError || (!done.Exit && done.Signal == 0) || (cr.Status != StatusOK && cr.Status != StatusError) {
		return
	}
	cr.Status, cr.Signal = StatusError, done.Signal
	if done.Exit {
		cr.Exited, cr.ExitStatus = true, done.ExitStatus
	}
	if res.FailedCell < 0 {
		res.FailedCell, res.Status = ran, StatusError
	}
}
