package host

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// chunkCount is how many read buffers a raw reader may have lent at once:
// about 1 MiB, as much as the pipe holds. They are allocated only as output
// needs them: a reader whose text is written on before its next read keeps
// reusing the first, which is small (firstChunk), so a quiet interpreter
// costs what one 64 KiB buffer did; bulk output (a read of firstChunk/2 or
// more) reads on into the others.
const (
	chunkCount = 4
	firstChunk = 64 << 10
)

// chunks are the read buffers of one raw reader (fd 1 or 2). A read that
// is text alone, the usual case for bulk output, is handed on as a string
// over the chunk it was read into instead of a copy: the chunk is lent.
// Ownership, the one rule that makes this safe: a lent string is read
// until it is given back and never after; whoever keeps the text longer
// (output held for order, kept for the next cell, or emitted as a frame
// the caller may keep) takes its own copy with own, which gives the chunk
// back. The reader waits for a chunk when all are lent, as it waits when
// the event queue is full, so lending never costs memory beyond the chunks.
type chunks struct {
	bufs [chunkCount]atomic.Pointer[[]byte] // set once, by take

	mu   sync.Mutex
	free []int         // a stack: the chunk given back last is reused first
	lent uint8         // bit i: chunk i is lent, so it may be given back once
	back chan struct{} // a chunk was given back since the reader looked
}

func newChunks() *chunks {
	c := &chunks{free: make([]int, 0, chunkCount), back: make(chan struct{}, 1)}
	for i := chunkCount - 1; i >= 0; i-- {
		c.free = append(c.free, i)
	}
	return c
}

// take returns a chunk that is not lent, waiting for one to come back; for
// bulk output one of the large ones if any is free. Only the reader takes.
func (c *chunks) take(bulk bool) (int, []byte) {
	for {
		c.mu.Lock()
		if n := len(c.free); n > 0 {
			k := n - 1
			for bulk && c.free[k] == 0 && k > 0 {
				k--
			}
			i := c.free[k]
			c.free = append(c.free[:k], c.free[k+1:]...)
			c.mu.Unlock()
			b := c.bufs[i].Load()
			if b == nil {
				buf := make([]byte, readSize)
				if i == 0 {
					buf = make([]byte, firstChunk)
				}
				b = &buf
				c.bufs[i].Store(b)
			}
			return i, *b
		}
		c.mu.Unlock()
		<-c.back
	}
}

// put makes chunk i free again; a chunk that is not lent stays as it is.
func (c *chunks) put(i int) {
	c.mu.Lock()
	if c.lent&(1<<i) == 0 {
		c.mu.Unlock()
		return
	}
	c.lent &^= 1 << i
	c.free = append(c.free, i)
	c.mu.Unlock()
	select {
	case c.back <- struct{}{}:
	default:
	}
}

// lend returns the first n bytes of chunk i, taken, as a string that
// aliases it.
func (c *chunks) lend(i, n int) string {
	c.mu.Lock()
	c.lent |= 1 << i
	c.mu.Unlock()
	return unsafe.String(&(*c.bufs[i].Load())[0], n)
}

// giveBack returns the chunk s was lent from to the reader; s must not be
// read afterwards. Any other string is left alone.
func (c *chunks) giveBack(s string) {
	if i := c.lentFrom(s); i >= 0 {
		c.put(i)
	}
}

// own returns s as a string its holder may keep: a lent string is copied
// and its chunk given back; any other string is returned as it is.
func (c *chunks) own(s string) string {
	i := c.lentFrom(s)
	if i < 0 {
		return s
	}
	s = string(unsafe.Slice(unsafe.StringData(s), len(s)))
	c.put(i)
	return s
}

// lentFrom returns the chunk s aliases, or -1. Only the reader makes
// strings that start at a chunk's first byte.
func (c *chunks) lentFrom(s string) int {
	if len(s) == 0 {
		return -1
	}
	d := unsafe.StringData(s)
	for i := range c.bufs {
		if b := c.bufs[i].Load(); b != nil && d == &(*b)[0] {
			return i
		}
	}
	return -1
}

// own returns text read from fd as a string its holder may keep (see chunks).
func (p *Process) own(fd int, s string) string {
	if c := p.chunks[fd]; c != nil {
		return c.own(s)
	}
	return s
}

// giveBack ends the loan of text read from fd (see chunks).
func (p *Process) giveBack(fd int, s string) {
	if c := p.chunks[fd]; c != nil {
		c.giveBack(s)
	}
}
