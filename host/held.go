package host

import "github.com/evalhost/evalhost/frames"

// heldText is text read past a position mark whose frame has not been
// delivered: it goes out once that frame has (releaseHeld).
type heldText struct {
	epoch int // position marks seen on its fd before it
	seq   int // its place among all held text, which is the order it goes out in
	frame frames.Frame
}

// heldQueue is one stream's held text in the order it was read. A stream's
// marks only grow, so its epochs do too: what may go out is a prefix, and
// releasing it costs what is released, not what stays. A single list of
// both streams' text, scanned whole at each release, was quadratic when a
// cell's stdout and stderr lines interleave (80,000 lines: minutes).
type heldQueue struct {
	items []heldText
	head  int
}

func (q *heldQueue) len() int { return len(q.items) - q.head }

func (q *heldQueue) front() *heldText { return &q.items[q.head] }

func (q *heldQueue) push(h heldText) {
	if q.head > 0 && q.head >= len(q.items)/2 {
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:]) // the frames sent are not kept alive
		q.items, q.head = q.items[:n], 0
	}
	q.items = append(q.items, h)
}

func (q *heldQueue) pop() heldText {
	h := q.items[q.head]
	q.items[q.head] = heldText{}
	if q.head++; q.head == len(q.items) {
		q.items, q.head = q.items[:0], 0
	}
	return h
}

// heldStream is the queue of f's stream.
func heldStream(f frames.Frame) int {
	if f.Type == frames.TypeStderr {
		return 1
	}
	return 0
}

// hold keeps h behind its epoch's frame, after all text held before it.
func (c *cell) hold(h heldText) {
	h.seq = c.heldSeq
	c.heldSeq++
	c.held[heldStream(h.frame)].push(h)
	c.heldBytes += len(h.frame.Data)
}

// heldLen is how much text is held, in pieces.
func (c *cell) heldLen() int { return c.held[0].len() + c.held[1].len() }

// nextHeld is the queue whose front goes out next: of the fronts that may
// go (all of them, or those whose frame is out), the one held first; nil
// when none may.
func (c *cell) nextHeld(all bool) *heldQueue {
	var next *heldQueue
	for i := range c.held {
		q := &c.held[i]
		if q.len() == 0 || !all && q.front().epoch > c.posSent {
			continue
		}
		if next == nil || q.front().seq < next.front().seq {
			next = q
		}
	}
	return next
}

// takeHeld empties the queues and returns what they held, in order.
func (c *cell) takeHeld() []heldText {
	out := make([]heldText, 0, c.heldLen())
	for q := c.nextHeld(true); q != nil; q = c.nextHeld(true) {
		out = append(out, q.pop())
	}
	c.heldBytes = 0
	return out
}

// releaseHeld emits held text whose frame is out; all of it once the cell
// is complete (done is the last frame, so no frame can claim the rest).
// It runs after every frame delivered; each call costs what it sends.
func (r *router) releaseHeld(all bool) {
	c := r.cur
	for q := c.nextHeld(all); q != nil; q = c.nextHeld(all) {
		h := q.pop()
		c.heldBytes -= len(h.frame.Data)
		c.out <- h.frame
	}
}
