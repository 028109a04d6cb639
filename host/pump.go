package host

import (
	"fmt"
	"time"

	"github.com/evalhost/evalhost/frames"
)

// markWait is how long a done frame waits for sync marks that are late. The
// runner writes the marks before done, so they are normally already in the
// pipes; this only keeps a cell that broke fd 1 or 2 (dup2) from hanging.
const markWait = time.Second

// Bounds of the output kept while no cell runs (it goes to the next cell).
const (
	pendingMaxBytes  = 1 << 20
	pendingMaxFrames = 4096
)

// cell is the pump's view of the executing cell. The pump sends the cell's
// frames on out, the done frame last, then closes out; when the streams end
// without a done frame it closes out without one.
type cell struct {
	id     string
	out    chan frames.Frame
	marked [4]bool // by fd: sync mark seen (or stream ended) on fd 1, 2
	done   *frames.Frame
}

func (c *cell) complete() bool { return c.done != nil && c.marked[1] && c.marked[2] }

// pump is the one owner of output attribution: it takes every reader event
// in arrival order, routes it to the executing cell or keeps it for the next,
// and ends when all three readers have ended.
func (p *Process) pump() {
	defer p.wg.Done()
	defer close(p.pumpDone)
	var (
		cur     *cell
		pend    pending
		eof     [4]bool
		ended   int
		ready   bool
		late    = time.NewTimer(markWait)
		lateArm <-chan time.Time
	)
	late.Stop()
	defer late.Stop()
	for ended < 3 {
		select {
		case ev := <-p.events:
			switch ev.kind {
			case evText:
				f := frames.Frame{Type: streamType(ev.fd), Data: ev.text}
				if cur != nil && !cur.marked[ev.fd] {
					f.ID = cur.id
					cur.out <- f
				} else {
					if ev.fd == 2 {
						p.tail.Write([]byte(ev.text))
					}
					pend.add(f)
				}
			case evMark:
				if cur != nil && ev.text == cur.id {
					cur.marked[ev.fd] = true
				}
			case evFrame:
				f := ev.frame
				switch {
				case f.Type == frames.TypeReady && !ready:
					ready = true
					p.readyCh <- f
				case f.Type == frames.TypeDone:
					if cur != nil && f.ID == cur.id {
						cur.done = &f
						if !cur.complete() {
							late.Reset(markWait)
							lateArm = late.C
						}
					}
				case cur != nil:
					cur.out <- f
				default:
					pend.add(f)
				}
			case evEOF:
				eof[ev.fd] = true
				ended++
				if cur != nil {
					cur.marked[ev.fd] = true
				}
			}
		case c := <-p.register:
			cur = c
			c.marked[1], c.marked[2] = eof[1], eof[2]
			pend.flush(c)
		case <-lateArm:
			lateArm = nil
			if cur != nil && cur.done != nil {
				cur.out <- frames.Frame{Type: frames.TypeWarning, ID: cur.id,
					Message: "cell output may be incomplete: the runner's end-of-cell mark did not arrive on stdout or stderr (was fd 1 or 2 redirected?)"}
				cur.marked[1], cur.marked[2] = true, true
			}
		}
		if cur != nil && cur.complete() {
			late.Stop()
			lateArm = nil
			cur.out <- *cur.done
			close(cur.out)
			cur = nil
		}
	}
	if cur != nil {
		close(cur.out)
	}
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

// flush hands the kept output to c, stream text under c's id.
func (q *pending) flush(c *cell) {
	if q.dropped > 0 {
		c.out <- frames.Frame{Type: frames.TypeWarning, ID: c.id,
			Message: fmt.Sprintf("%d earlier chunks of output written while no cell ran were dropped", q.dropped)}
	}
	for _, f := range q.frames {
		if f.Type == frames.TypeStdout || f.Type == frames.TypeStderr {
			f.ID = c.id
		}
		c.out <- f
	}
	*q = pending{}
}
