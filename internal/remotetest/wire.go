package remotetest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// wireQueue is how many frames a direction holds; a full queue stops its
// reader, and the device's own transmit queue then drops, as a full link's
// would.
const wireQueue = 4096

// wire joins two Ethernet devices as a cable would: each frame read from
// one end is written to the other, once that direction's delay has passed.
// A direction is a FIFO of frames stamped with when they may leave, so
// order is kept and the delay holds each frame once, not one after another:
// a burst leaves d after it came, at the rate it came.
type wire struct {
	ends [2]io.ReadWriteCloser
	dirs [2]direction
	done chan struct{}
	wg   sync.WaitGroup
	once sync.Once

	mu     sync.Mutex
	err    error         // the first failure that was not Close's doing
	failed chan struct{} // closed with err set
}

// direction carries the frames read from one end to the other.
type direction struct {
	delay atomic.Int64 // a time.Duration
	queue chan frame
}

type frame struct {
	data []byte
	due  time.Time
}

// newWire starts carrying frames between a and b; Close stops it and
// closes both.
func newWire(a, b io.ReadWriteCloser) *wire {
	w := &wire{ends: [2]io.ReadWriteCloser{a, b}, done: make(chan struct{}), failed: make(chan struct{})}
	for from := range w.dirs {
		w.dirs[from].queue = make(chan frame, wireQueue)
		w.wg.Add(2)
		go w.read(from)
		go w.write(from)
	}
	return w
}

// setDelay holds each frame read from end `from` from now on for d.
func (w *wire) setDelay(from int, d time.Duration) { w.dirs[from].delay.Store(int64(d)) }

func (w *wire) read(from int) {
	defer w.wg.Done()
	dir := &w.dirs[from]
	defer close(dir.queue)
	buf := make([]byte, 1<<16) // a TAP read is one frame, at most 64 KiB
	for {
		n, err := w.ends[from].Read(buf)
		if err != nil {
			w.fail(fmt.Errorf("reading end %d: %w", from, err))
			return
		}
		f := frame{data: bytes.Clone(buf[:n]), due: time.Now().Add(time.Duration(dir.delay.Load()))}
		select {
		case dir.queue <- f:
		case <-w.done:
			return
		}
	}
}

func (w *wire) write(from int) {
	defer w.wg.Done()
	to := w.ends[1-from]
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for f := range w.dirs[from].queue {
		if wait := time.Until(f.due); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-w.done:
				return
			}
		}
		// A device that is down refuses frames (EIO): the cable drops
		// them, as a veth whose peer is down does.
		if _, err := to.Write(f.data); errors.Is(err, os.ErrClosed) {
			return
		}
	}
}

// fail keeps err unless Close caused it.
func (w *wire) fail(err error) {
	select {
	case <-w.done:
		return
	default:
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil && !errors.Is(err, os.ErrClosed) {
		w.err = err
		close(w.failed)
	}
}

// Close closes both ends and returns once the wire's goroutines are done,
// with the first failure the wire met, if any. Safe to call twice.
func (w *wire) Close() error {
	w.once.Do(func() {
		close(w.done)
		for _, end := range w.ends {
			end.Close()
		}
		w.wg.Wait()
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}
