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
		_, _ = ex.Execute(exitCtx, frames.Request{ID: j.req.ID + "-exit-" + newRunNonce()}, func(f frames.Frame) {
			switch f.Type {
			case frames.TypeStdout, frames.TypeStderr, frames.TypeWarning:
				emit(ran, sink.frame(f))
			}
		})
		cancel()
		for _, f := range sink.held() {
			emit(ran, f)
		}
	}
}
