package gateway

import (
	"context"
	"time"

	"github.com/evalhost/evalhost/frames"
)

// A request can end without its execute_reply: ipykernel's shell handler
// catches a KeyboardInterrupt that lands outside the cell's code, where
// IPython does not (before it: the input transformers ipykernel runs; after
// it: the post_execute hooks), logs "KeyboardInterrupt caught in kernel"
// and publishes idle with no reply. An interrupt sent as the cell starts
// lands there now and then (once in ten runs here, cancelled at started),
// and the cell then waited for the kill. So when the cell's idle comes
// before its reply, a kernel_info_request goes out on shell: the kernel
// answers shell requests in order, after the cell's, and the gateway
// forwards them in order, so its reply arriving first says there is no
// execute_reply to wait for.
//
// Idle overtakes the reply routinely (they travel on different channels:
// 59 of 400 warm round trips here), so without an interrupt the marker
// waits replyWait: the reply is then all but certain to be lost (an
// exception in ipykernel's handling of the request), and the marker only
// spares the cell a hang.

// replyWait is how long a cell that was not interrupted waits for its
// execute_reply after its idle before the marker goes out.
var replyWait = time.Second

// askReply sends that marker once, when the cell's idle came and its reply
// has not: at once after an interrupt, else once replyLate fired. One that
// cannot be sent leaves the cell to the grace window or the kernel's death.
func (k *Kernel) askReply(c *cell) {
	if !c.gotIdle || c.gotReply || c.replyMarker != "" {
		return
	}
	if !c.interrupted && !c.interruptSent && !c.replyOverdue {
		if c.replyLate == nil {
			c.replyLate = time.After(replyWait)
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), k.links.pingTimeout)
	defer cancel()
	if id, err := k.send(ctx, "shell", "kernel_info_request", struct{}{}); err == nil {
		c.replyMarker = id
	}
}

// markerReplied ends the cell when the marker's reply came before the
// cell's: an interrupted cell with the KeyboardInterrupt the kernel
// caught, any other with a warning.
func (c *cell) markerReplied(m *message) {
	if m.Header.MsgType != "kernel_info_reply" || c.gotReply {
		return
	}
	c.gotReply = true
	c.reply.Status = "error"
	if c.interrupted || c.interruptSent {
		c.emit(frames.Frame{Type: frames.TypeError, ID: c.req.ID, Ename: "KeyboardInterrupt", KeyboardInterrupt: true})
		return
	}
	c.emit(frames.Frame{Type: frames.TypeWarning, ID: c.req.ID, Message: "the kernel ended the cell without an execute_reply " +
		"(an exception in ipykernel's own handling of the request: the kernel's log says which)"})
}
