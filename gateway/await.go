package gateway

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
)

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
		case <-c.replyLate:
			c.replyOverdue = true
			k.askReply(c)
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
		case seq := <-k.interrupts:
			if seq == c.seq {
				k.interruptCell(c, &intr)
			}
		case <-intr.fallback:
			intr.fallback = nil
			// Not after the reply: a late SIGINT lands in the next cell.
			if !c.gotReply && !c.acked && !(k.controlInterrupts && k.controlOK.Load()) {
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
// watch's marker says its idle was dropped, or restarts the watch. Nothing
// is sent once the reply came (interruptCell), though a refusal or an
// execute_input (another channel) may come after it.
func (k *Kernel) receive(c *cell, in inbound, intr *interrupter, quiet *idleWatch) {
	k.handle(c, in)
	if c.pendingInterrupt && c.executing && !c.gotReply {
		c.pendingInterrupt = false
		intr.start(k, c)
	}
	if c.refused && !c.gotReply {
		intr.restInterrupt(k)
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
// cancel that early waits for execute_input. A cell Kernel.Interrupt
// interrupted already gets no second one: it would land in the cell's
// handling of the first.
func (k *Kernel) cancelCell(c *cell, intr *interrupter) {
	c.interrupted = true
	if !c.interruptSent && !c.pendingInterrupt {
		k.interruptCell(c, intr)
	}
	intr.grace = time.After(k.grace)
}

// interruptCell interrupts the cell now, or once its code runs; not once
// its reply came: its code has ended, and a SIGINT the kernel's control
// thread sends late would land in the next cell.
func (k *Kernel) interruptCell(c *cell, intr *interrupter) {
	switch {
	case c.gotReply:
	case c.executing:
		intr.start(k, c)
	default:
		c.pendingInterrupt = true
	}
}

// interrupter is the interrupt ladder of a cell, cancelled or through
// Kernel.Interrupt: one control-channel interrupt_request; the REST
// interrupt if the kernel answered that it could not signal itself or, on a
// kernel whose control channel never answered or that has no
// interrupt_request handler (ipykernel 5), gave no answer within
// restFallback; for a cancelled cell, the kill when the grace window ends.
//
// No interrupt is repeated: a second SIGINT lands in whatever the cell does
// about the first (its except block, IPython formatting the traceback, 0.8 s
// for a kernel's first on a busy core) and cuts it short. The one is sent
// when the cell's code runs (execute_input): ipykernel's SIGINT handler is
// live from before it publishes execute_input until the reply. One that
// lands outside the cell's code loses the reply (lostreply.go); one that
// lands just before a blocking call is run by the kernel's own wake-ups
// (wakeSource). A cell that catches it and runs on is killed when the grace
// window ends: Jupyter's clients, too, send one interrupt and leave the
// rest to a restart.
type interrupter struct {
	fallback <-chan time.Time
	grace    <-chan time.Time
	restSent bool
	rest     sync.WaitGroup // the REST interrupt in flight
}

func (i *interrupter) start(k *Kernel, c *cell) {
	c.interruptSent = true
	id, err := k.sendInterrupt()
	if err != nil {
		i.restInterrupt(k)
		return
	}
	c.interruptID = id
	i.fallback = time.After(restFallback)
}

// restInterrupt sends the REST interrupt without holding up the cell's
// messages; the grace timer judges the outcome.
func (i *interrupter) restInterrupt(k *Kernel) {
	if i.restSent {
		return
	}
	i.restSent = true
	i.rest.Add(1)
	go func() {
		defer i.rest.Done()
		rctx, cancel := context.WithTimeout(context.Background(), k.grace)
		defer cancel()
		_ = k.client.interruptKernel(rctx, k.id)
	}()
}

// stop waits for the REST interrupt.
func (i *interrupter) stop() {
	i.rest.Wait()
}
