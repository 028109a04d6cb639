package main

import (
	"os"
	"sync"
	"syscall"
)

// maxPendingSignals bounds sigQueue: far more than a user's keys and
// kills can stack up while one signal is handled.
const maxPendingSignals = 64

// sigQueue holds the signals that came while one was being handled (a
// forward to an attached run's background process is a round trip), taken
// off os/signal's channel at once: that channel is small, and os/signal
// drops what does not fit, so a storm of one signal behind a slow handler
// would crowd out another (a SIGTERM lost after SIGUSR1s). Like the
// kernel's pending set for python3, a signal coalesces with the same one
// queued last (a storm is one), and different ones are all kept, in order;
// SIGINT is never coalesced (the second Ctrl-C kills).
type sigQueue struct {
	mu      sync.Mutex
	pending []syscall.Signal
	ready   chan struct{} // has a value when pending may be non-empty
}

func newSigQueue() *sigQueue { return &sigQueue{ready: make(chan struct{}, 1)} }

// put queues sig and wakes the taker.
func (q *sigQueue) put(s os.Signal) {
	sig, ok := s.(syscall.Signal)
	if !ok {
		return
	}
	q.mu.Lock()
	n := len(q.pending)
	if (n == 0 || q.pending[n-1] != sig || sig == syscall.SIGINT) && n < maxPendingSignals {
		q.pending = append(q.pending, sig)
	}
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// take returns the oldest pending signal, if any.
func (q *sigQueue) take() (syscall.Signal, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.pending) == 0 {
		return 0, false
	}
	sig := q.pending[0]
	q.pending = q.pending[1:]
	return sig, true
}
