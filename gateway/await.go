package gateway

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
)

// resendEvery is how often an interrupt is repeated while the cell runs on:
// ipykernel ignores SIGINT outside a cell's execution, so one that lands
// just before the cell starts is lost.
var resendEvery = 500 * time.Millisecond

// idleWait is how long a cell whose execute_reply is in waits for its idle
// status without any byte arriving: iopub may have dropped it, and a cell
// must never hang on that.
var idleWait = 3 * time.Second

// await translates the cell's messages until it is done, cancelled, killed
// or the kernel ends.
func (k *Kernel) await(ctx context.Context, c *cell) (frames.Frame, error) {
	ctxDone := ctx.Done()
	var intr interrupter
	defer intr.stop()
	quiet := newIdleWatch(k.msgs.progress)
	defer quiet.stop()
	for !(c.gotReply && c.gotIdle) {
		// Queued messages first: a cell that is done must not lose to a
		// timer that fired meanwhile.
		select {
		case in := <-k.in:
			k.receive(c, in, &intr, quiet)
			continue
		default:
		}
		select {
		case in := <-k.in:
			k.receive(c, in, &intr, quiet)
		case <-quiet.c:
			if quiet.arriving() {
				continue
			}
			c.emit(frames.Frame{Type: frames.TypeWarning, ID: c.req.ID, Message: quiet.warning()})
			c.gotIdle = true
		case <-k.done:
			k.drain(c)
			if c.gotReply && c.gotIdle {
				continue
			}
			return frames.Frame{}, fmt.Errorf("execute %s: %w", c.req.ID, k.endErr)
		case <-ctxDone:
			ctxDone = nil
			k.cancelCell(c, &intr)
		case <-intr.resendC(c):
			_ = k.sendInterrupt()
		case <-intr.fallback:
			intr.fallback = nil
			if !c.acked {
				intr.restInterrupt(k)
			}
		case <-intr.grace:
			_ = k.Kill()
			k.drain(c)
			return frames.Frame{}, fmt.Errorf("execute %s: cancelled (%v) and the kernel did not settle within %v: %w",
				c.req.ID, context.Cause(ctx), k.grace, backend.ErrKilled)
		}
	}
	c.reportDropped()
	return c.doneFrame(), nil
}

// receive handles one message, starts an interrupt that waited for the
// cell's code to run, and after execute_reply restarts the idle watch.
func (k *Kernel) receive(c *cell, in inbound, intr *interrupter, quiet *idleWatch) {
	k.handle(c, in)
	if c.pendingInterrupt && c.executing {
		c.pendingInterrupt = false
		intr.start(k)
	}
	if c.gotReply {
		quiet.arm()
	}
}

// cancelCell interrupts the cell for its caller's cancelled context. ipykernel
// ignores an interrupt that arrives before it runs the cell's code, so a
// cancel that early waits for execute_input.
func (k *Kernel) cancelCell(c *cell, intr *interrupter) {
	c.interrupted = true
	if c.executing {
		intr.start(k)
	} else {
		c.pendingInterrupt = true
	}
	intr.grace = time.After(k.grace)
}

// interrupter is the interrupt ladder of a cancelled cell: the control
// channel's interrupt_request, repeated every resendEvery until the reply;
// the REST interrupt when the control channel gave no answer within
// restFallback; the kill when the grace window ends.
type interrupter struct {
	fallback <-chan time.Time
	grace    <-chan time.Time
	resend   *time.Ticker
	rest     sync.WaitGroup // the REST interrupt in flight
}

func (i *interrupter) start(k *Kernel) {
	i.fallback = time.After(restFallback)
	if k.sendInterrupt() != nil {
		i.fallback = time.After(0)
	}
	i.resend = time.NewTicker(resendEvery)
}

// resendC ticks while an interrupt is running and the cell's reply is out.
func (i *interrupter) resendC(c *cell) <-chan time.Time {
	if i.resend == nil || c.gotReply {
		return nil
	}
	return i.resend.C
}

// restInterrupt sends the REST interrupt without holding up the cell's
// messages; the grace timer judges the outcome.
func (i *interrupter) restInterrupt(k *Kernel) {
	i.rest.Add(1)
	go func() {
		defer i.rest.Done()
		rctx, cancel := context.WithTimeout(context.Background(), k.grace)
		defer cancel()
		_ = k.client.interruptKernel(rctx, k.id)
	}()
}

// stop ends the resend ticker and waits for the REST interrupt.
func (i *interrupter) stop() {
	if i.resend != nil {
		i.resend.Stop()
	}
	i.rest.Wait()
}

// idleWatch ends a cell whose idle status does not come: after
// execute_reply, idle is awaited while messages keep coming (a backlog of
// output may trail the reply by seconds, a large display arrive for
// longer), but a channel that fell silent for idleWait has dropped, or
// stalled, the rest.
type idleWatch struct {
	t        *time.Timer
	c        <-chan time.Time // nil until execute_reply
	progress func() int64     // grows as bytes arrive
	mark     int64            // progress when the timer was set
}

func newIdleWatch(progress func() int64) *idleWatch {
	t := time.NewTimer(idleWait)
	t.Stop()
	return &idleWatch{t: t, progress: progress}
}

func (w *idleWatch) arm() {
	w.mark = w.progress()
	w.t.Reset(idleWait)
	w.c = w.t.C
}

// arriving is called when the timer fired: true, and the timer set again,
// when bytes arrived meanwhile (a message still on its way).
func (w *idleWatch) arriving() bool {
	if w.progress() == w.mark {
		return false
	}
	w.arm()
	return true
}

func (w *idleWatch) stop() { w.t.Stop() }

func (w *idleWatch) warning() string {
	return fmt.Sprintf("the kernel answered the cell, but its idle status had not come after %v without any message: "+
		"Jupyter's iopub channel drops (or holds back) messages when a kernel writes faster than the "+
		"gateway forwards them, so output may be missing", idleWait)
}
