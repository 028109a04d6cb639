package host

import (
	"sync/atomic"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/plural"
)

// markWait is how long a done frame waits for sync marks that are late. The
// runner writes the marks before done, so they are normally already in the
// pipes; this only keeps a cell that broke fd 1 or 2 (dup2) from hanging.
// It counts the time the interpreter could run (stopclock.go).
const markWait = time.Second

// Bounds of the output kept while no cell runs (it goes to the next cell).
const (
	pendingMaxBytes  = 1 << 20
	pendingMaxFrames = 4096
)

// cell is the pump's view of the executing cell. The pump sends the cell's
// frames on out, the done frame last, then endOfCell; when the streams end
// without a done frame it sends endOfCell without one. out is the
// Process's, shared by its cells (one runs at a time, and await takes
// everything up to endOfCell): a channel per cell cost ~18 KB of garbage
// per round trip.
type cell struct {
	id     string
	out    chan frames.Frame
	marked [4]bool       // by fd: end-of-cell sync mark seen (or stream ended) on fd 1, 2
	done   *frames.Frame // &final once the done frame is in
	final  frames.Frame

	// Text read before the cell's started frame waits for it: the runner
	// sends started before any user code runs, but the pipes are read by
	// separate goroutines, so the frame can be read after the first output.
	started    bool
	early      []frames.Frame
	earlyBytes int

	// position.go: the newest position mark seen per fd, the place of the
	// last ordered frame queued and delivered, frames waiting for their
	// marks, text read past a mark whose frame waits.
	posSeen   [4]int
	posQueued int
	posSent   int
	queue     []frames.Frame
	held      [2]heldQueue // stdout's, stderr's (held.go)
	heldSeq   int
	heldBytes int
	unordered bool // gave up exact order: too much text waited for a frame

	// A last cell (ExitAfterNextCell) owns what its interpreter writes as
	// it exits (atexit handlers, finalizers, threads' last lines; exitout.go):
	// held in after (its frames in queue) until the cell is complete, then
	// sent behind done (exiting), in order by the exit's own sync marks,
	// until the streams end.
	leaving, exiting bool
	after            []heldText
}

// maxHeld bounds text held behind a position mark whose frame is late (a
// runner whose marks and frames disagree); past it, order is given up.
const maxHeld = 4 << 20

// complete: the cell's own output is all in. A last cell's frames queued
// behind its done are its exit's, which beginExit routes.
func (c *cell) complete() bool {
	return c.done != nil && c.marked[1] && c.marked[2] && (len(c.queue) == 0 || c.leaving)
}

// pump is the one owner of output attribution: it takes every reader event
// in arrival order, routes it to the executing cell or keeps it for the next,
// and ends when all three readers have ended.
func (p *Process) pump() {
	defer p.wg.Done()
	r := router{p: p, queueBuf: make([]frames.Frame, 0, 4)}
	if p.opts.MergeStderr {
		// fd 2 is fd 1's pipe: no reader, no marks, as a stream that ended.
		r.eof[2], r.ended = true, 1
	}
	defer r.late.stop()
	defer r.order.stop()
	for r.ended < 3 {
		select {
		case ev := <-p.events:
			r.adopt()
			if r.drainLeft > 0 {
				r.drainLeft--
			}
			r.event(ev)
			if r.settling && r.drainLeft == 0 && r.settleWait == 0 && r.cur != nil {
				r.release()
			}
		case <-r.late.C:
			if r.late.expired() {
				r.markTimeout()
			}
		case <-r.late.R:
			r.late.resume()
		case <-r.order.C:
			if r.order.expired() {
				r.orderTimeout()
			}
		case <-r.order.R:
			r.order.resume()
		}
		r.finishIfComplete()
	}
	// Closed before the last adoption: a cell offered after it sees
	// pumpDone and takes itself back (offer).
	close(p.pumpDone)
	r.adopt()
	if r.cur != nil {
		r.release()
		r.flushEarly()
		r.releaseHeld(true)
		r.sendAfter()
		r.cur.out <- frames.Frame{Type: endOfCell}
	}
}

// endOfCell is the pump's last word on a cell's out: nothing of the cell's
// follows it. No frame read from the runner has this type.
const endOfCell frames.Type = 255

// cellSlot holds the cell Execute offers until the pump adopts it.
type cellSlot struct{ atomic.Pointer[cell] }

// offer hands c to the pump without waking it: the pump adopts it before
// it routes its next event, and no output of c's can come before c's
// request is written, which is after this. false: the pump has ended.
func (p *Process) offer(c *cell) bool {
	p.next.Store(c)
	select {
	case <-p.pumpDone:
		// Taken back unless the pump's last adoption has it (it then
		// sends endOfCell, and await reports the end).
		return !p.next.CompareAndSwap(c, nil)
	default:
		return true
	}
}

// adopt attaches the cell Execute offered, if any.
func (r *router) adopt() {
	if c := r.p.next.Swap(nil); c != nil {
		r.attach(c)
	}
}

// router is the pump's state.
type router struct {
	p     *Process
	cur   *cell
	pend  pending
	eof   [4]bool
	ended int
	ready bool
	marks bool // the runner said its position marks will come

	// queueBuf is the array of the queue, reused from cell to cell (frame).
	queueBuf []frames.Frame

	late runTimer // a done frame's wait for late end marks (markWait)

	// A runner that has not shown position marks gets its ordered frames
	// after posWait of run time at most, so displays keep streaming.
	order runTimer
	force bool

	// position.go: the check that everything read from the fds a frame has
	// no mark for is routed before it.
	settling   bool
	settleWait uint8 // fds whose read under way the check waits for (evIdle)
	drainLeft  int   // events queued at the check still to route
}

func (r *router) event(ev event) {
	switch ev.kind {
	case evRead:
		for _, pt := range ev.parts {
			if pt.mark {
				r.mark(ev.fd, pt.text)
			} else {
				r.text(ev.fd, pt.text)
			}
		}
	case evText:
		r.text(ev.fd, ev.text)
	case evMark:
		r.mark(ev.fd, ev.text)
	case evFrame:
		r.frame(ev.frame)
	case evFrames:
		for _, f := range ev.frames {
			r.frame(f)
		}
		r.p.giveBatch(ev.frames) // every frame was copied out
	case evIdle:
		r.settleWait &^= uint8(ev.fd)
	case evEOF:
		r.eof[ev.fd] = true
		r.ended++
		r.settleWait &^= uint8(ev.fd)
		if r.cur != nil {
			r.cur.marked[ev.fd] = true
			r.release()
		}
	}
}

// mark takes a sync mark read on fd: the cell's end mark, or a position mark.
func (r *router) mark(fd int, id string) {
	c := r.cur
	switch {
	case c == nil:
		return
	case id == c.id:
		c.marked[fd] = true
	default:
		k, ok := posMarkNumber(id, c.posSeen[fd])
		if !ok {
			return
		}
		r.p.posMarks.Add(1)
		c.posSeen[fd] = max(c.posSeen[fd], k)
	}
	r.release()
}

// text routes text read from fd. Text the pump keeps is its own copy: s
// may be lent from the reader's chunk (chunks.go), which only the cell's
// caller may read, and only until it has written it on.
func (r *router) text(fd int, s string) {
	f := frames.Frame{Type: streamType(fd), Data: s}
	c := r.cur
	switch {
	case c != nil && c.marked[fd] && c.leaving && !c.exiting:
		r.exitText(fd, f)
	case c == nil || c.marked[fd]:
		if fd == 2 || r.p.opts.MergeStderr {
			r.p.tail.Write([]byte(s))
		}
		f.Data = r.p.own(fd, s)
		r.pend.add(f)
	case c.posSeen[fd] > c.posSent && !c.unordered:
		f.ID, f.Data = c.id, r.p.own(fd, s)
		if c.hold(heldText{epoch: c.posSeen[fd], frame: f}); c.heldBytes > maxHeld {
			c.unordered = true
			r.releaseHeld(true)
			r.release()
		}
	case !c.started:
		f.ID, f.Data = c.id, r.p.own(fd, s)
		r.holdEarly(f)
	default:
		f.ID = c.id
		c.out <- f
	}
}

// holdEarly keeps f until the cell's started frame is out; past maxHeld it
// gives up waiting.
func (r *router) holdEarly(f frames.Frame) {
	c := r.cur
	c.early = append(c.early, f)
	if c.earlyBytes += len(f.Data); c.earlyBytes > maxHeld {
		r.flushEarly()
	}
}

// flushEarly sends what waited for the started frame and stops waiting:
// called when started is out, or when anything else must go out first
// (a runner that sent no started frame).
func (r *router) flushEarly() {
	c := r.cur
	c.started = true
	for _, f := range c.early {
		c.out <- f
	}
	c.early, c.earlyBytes = nil, 0
}

func (r *router) frame(f frames.Frame) {
	switch {
	case f.Type == frames.TypeReady && !r.ready:
		r.ready, r.marks = true, f.Marks
		r.p.readyCh <- f
	case f.Type == frames.TypeDone && (r.cur == nil || f.ID != r.cur.id):
		// a stale done (its cell was given up); nothing waits for it
	case f.Type == frames.TypeInterrupted:
		// Only await wants it, at once: it ends the wake-ups, and behind
		// queued frames it could wait for marks. A late one is dropped.
		if r.cur != nil && f.ID == r.cur.id {
			r.cur.out <- f
		}
	case r.cur == nil:
		r.pend.add(f)
	default:
		c := r.cur
		if ordered(f.Type) {
			if f.Pos == 0 {
				f.Pos = c.posQueued + 1 // a runner that numbers no frames: its marks count them
			}
			c.posQueued = f.Pos
		}
		if len(c.queue) == 0 {
			c.queue = r.queueBuf[:0] // all delivered: its array is free again
		}
		c.queue = append(c.queue, f)
		if len(c.queue) == 1 {
			r.queueBuf = c.queue
		}
		r.release()
	}
}

// release delivers queued frames whose position marks are in (or can no
// longer come), each followed by the text held behind its marks.
func (r *router) release() {
	c := r.cur
	for len(c.queue) > 0 {
		if c.leaving && c.done != nil && !c.exiting {
			// The exit's frames (exitout.go) wait for beginExit: their
			// position marks come after the end marks, which would release
			// them here, past exit text not yet read.
			return
		}
		f := c.queue[0]
		if ordered(f.Type) {
			k := f.Pos
			for fd := 1; fd <= 2; fd++ {
				if f.Unmarked&uint8(fd) == 0 && c.posSeen[fd] < k && !c.marked[fd] && !c.unordered && !r.force {
					r.armOrder()
					return
				}
			}
		}
		if f.Unmarked != 0 && !r.settled(f.Unmarked) {
			return
		}
		if ordered(f.Type) {
			c.posSent = max(c.posSent, f.Pos)
			r.force = false
			r.order.disarm()
		}
		if f.Type == frames.TypeDone {
			// no end mark comes on the fds it names: all they carried is routed
			c.marked[1] = c.marked[1] || f.Unmarked&1 != 0
			c.marked[2] = c.marked[2] || f.Unmarked&2 != 0
		}
		c.queue = c.queue[1:]
		f.Pos, f.Unmarked = 0, 0
		r.deliver(f)
		r.releaseHeld(false)
	}
}

// deliver hands f to the cell; done is kept until the end marks are in; a
// sync frame has done its work once its place is reached.
func (r *router) deliver(f frames.Frame) {
	if f.Type == frames.TypeSync {
		return
	}
	if f.Type == frames.TypeStarted {
		r.cur.out <- f
		r.flushEarly()
		return
	}
	r.flushEarly()
	if f.Type != frames.TypeDone {
		r.cur.out <- f
		return
	}
	// Kept in the cell: taking f's address would move every frame
	// deliver gets to the heap.
	r.cur.final = f
	r.cur.done = &r.cur.final
	if !r.cur.complete() {
		r.late.reset(&r.p.stops, r.p.opts.markWait)
	}
}

// armOrder bounds the wait of a frame for position marks while the runner
// has neither announced them (ready's marks) nor shown any; otherwise they
// are known to come, however much text is still in the pipes before them.
func (r *router) armOrder() {
	if r.order.active() || r.marks || r.p.posMarks.Load() > 0 {
		return
	}
	r.order.reset(&r.p.stops, r.p.opts.posWait)
}

func (r *router) orderTimeout() {
	if r.cur != nil {
		r.force = true
		r.release()
		r.force = false
	}
}

func (r *router) attach(c *cell) {
	r.cur = c
	r.settling, r.settleWait, r.drainLeft = false, 0, 0
	c.marked[1], c.marked[2] = r.eof[1], r.eof[2]
	r.pend.flush(c.id, r.holdEarly)
}

func (r *router) markTimeout() {
	if r.cur != nil && r.cur.done != nil {
		r.cur.out <- frames.Frame{Type: frames.TypeWarning, ID: r.cur.id,
			Message: "cell output may be incomplete: the runner's end-of-cell mark did not arrive on stdout or stderr (was fd 1 or 2 redirected?)"}
		r.cur.marked[1], r.cur.marked[2] = true, true
		r.release()
	}
}

func (r *router) finishIfComplete() {
	c := r.cur
	if c == nil || c.exiting || !c.complete() {
		return
	}
	r.flushEarly()
	// A last cell's text held past its last frame is its exit's (beginExit).
	r.releaseHeld(!c.leaving)
	r.late.stop()
	c.out <- *c.done
	if c.leaving {
		r.beginExit() // the cell stays current until the streams end
		return
	}
	c.out <- frames.Frame{Type: endOfCell}
	r.cur = nil
}

func streamType(fd int) frames.Type {
	if fd == 2 {
		return frames.TypeStderr
	}
	return frames.TypeStdout
}

// pending is output that arrived while no cell ran: it belongs to the next
// cell. It keeps the newest frames within its bounds.
type pending struct {
	frames  []frames.Frame
	bytes   int
	dropped int
}

func (q *pending) add(f frames.Frame) {
	q.frames = append(q.frames, f)
	q.bytes += len(f.Data)
	for len(q.frames) > 1 && (q.bytes > pendingMaxBytes || len(q.frames) > pendingMaxFrames) {
		q.bytes -= len(q.frames[0].Data)
		q.frames[0] = frames.Frame{}
		q.frames = q.frames[1:]
		q.dropped++
	}
}

// flush hands the kept output to send, stream text under the cell's id.
func (q *pending) flush(id string, send func(frames.Frame)) {
	if q.dropped > 0 {
		send(frames.Frame{Type: frames.TypeWarning, ID: id,
			Message: "dropped " + plural.Of(q.dropped, "earlier chunk") + " of output written while no cell ran"})
	}
	for _, f := range q.frames {
		if f.Type == frames.TypeStdout || f.Type == frames.TypeStderr {
			f.ID = id
		}
		send(f)
	}
	*q = pending{}
}
