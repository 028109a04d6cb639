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

// await translates the cell's messages until it is done, cancelled, killed
// or the kernel ends.
func (k *Kernel) await(ctx context.Context, c *cell) (frames.Frame, error) {
	ctxDone := ctx.Done()
	var intr interrupter
	defer intr.stop()
	quiet := k.newIdleWatch()
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
			quiet.fired()
		case err := <-quiet.pong:
			if quiet.silent(err) {
				c.emit(frames.Frame{Type: frames.TypeWarning, ID: c.req.ID, Message: quiet.warning()})
				c.gotIdle = true
			}
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
// cell's code to run, and after execute_reply ends the cell when the idle
// watch's marker says its idle was dropped, or restarts the watch.
func (k *Kernel) receive(c *cell, in inbound, intr *interrupter, quiet *idleWatch) {
	k.handle(c, in)
	if c.pendingInterrupt && c.executing {
		c.pendingInterrupt = false
		intr.start(k)
	}
	k.askReply(c)
	switch {
	case !c.gotReply || c.gotIdle:
	case quiet.settles(in.msg):
		c.emit(frames.Frame{Type: frames.TypeWarning, ID: c.req.ID, Message: droppedWarning()})
		c.gotIdle = true
	default:
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
