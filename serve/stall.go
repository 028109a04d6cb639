package serve

import (
	"time"
)

// StalledWrite bounds how long a reply may wait for the client once the
// work must end at once (Serve's context ended: evalhost serve's second
// signal; the background process's end, package daemon). Until then a
// client that reads slowly is waited for, as it must be for no reply to be
// lost; after it, one that took nothing for this long would hold Serve,
// and every interpreter it is killing, for ever: the interpreters' frames
// are delivered as they are read.
const StalledWrite = 5 * time.Second

// writeDeadliner is a writer whose writes can be bounded: an *os.File in
// Go's poller (a pipe; evalhost serve's stdout), a net.Conn.
type writeDeadliner interface{ SetWriteDeadline(time.Time) error }

// BoundWrites makes each write from now on fail once it has waited d for
// the client, the one waiting now included, and every write after a
// failed one is skipped: the client took nothing for d, and each line
// would wait d again. A writer that cannot be bounded is left as it is.
// It takes no lock: the write waiting now holds Encoder's.
func (e *Encoder) BoundWrites(d time.Duration) {
	dl, ok := e.w.(writeDeadliner)
	if !ok || dl.SetWriteDeadline(time.Now().Add(d)) != nil {
		return
	}
	e.bound.Store(int64(d))
}

// armWrite bounds the write about to be made, once BoundWrites was
// called; false: skip it, an earlier one failed.
func (e *Encoder) armWrite() bool {
	d := time.Duration(e.bound.Load())
	if d == 0 {
		return true
	}
	if e.err != nil {
		return false
	}
	_ = e.w.(writeDeadliner).SetWriteDeadline(time.Now().Add(d))
	return true
}
