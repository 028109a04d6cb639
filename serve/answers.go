package serve

import (
	"context"
	"sync"
)

// answers counts the requests whose answer (the last line about them: an
// eval's end, a reset's or a wait's reply, or the request_error instead)
// is not written yet, so that Serve can tell, once its output's reader is
// gone (Config.OutputGone), a client that had every answer from one whose
// requests were cut short. An answer leaves the count of unanswered ones
// before it is written and is waited for until written, as the client may
// have read it whole and left before the writer noted it done. The
// answers written on the reader's goroutine (preempted ops, refusals) are
// noted only when their write fails: stopDispatch waits for them.
type answers struct {
	mu         sync.Mutex
	unanswered int
	writing    int
	failed     bool          // an answer's write failed
	changed    chan struct{} // closed, and replaced, when an answer's write ends
}

func newAnswers() *answers { return &answers{changed: make(chan struct{})} }

// accept counts a request taken, to be answered from another goroutine.
func (a *answers) accept() {
	a.mu.Lock()
	a.unanswered++
	a.mu.Unlock()
}

// dropped counts a request read once its answer could no longer be
// written (Server.readSent), not run: it stays unanswered.
func (a *answers) dropped() { a.accept() }

// answering notes an accepted request's answer about to be written, and
// returns what to call with the write's error once it ended.
func (a *answers) answering() (written func(error)) {
	a.mu.Lock()
	a.unanswered--
	a.writing++
	a.mu.Unlock()
	return a.written
}

func (a *answers) written(err error) {
	a.mu.Lock()
	a.writing--
	a.failed = a.failed || err != nil
	close(a.changed)
	a.changed = make(chan struct{})
	a.mu.Unlock()
}

// replied notes the write of an answer made at once, on the reader's
// goroutine.
func (a *answers) replied(err error) {
	if err != nil {
		a.mu.Lock()
		a.failed = true
		a.mu.Unlock()
	}
}

// cutShort reports whether a request is unanswered.
func (a *answers) cutShort() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.unanswered > 0
}

// lost waits until no answer is being written, and reports whether one
// is unanswered or an answer's write failed; ctx's end stops the wait
// (lost then).
func (a *answers) lost(ctx context.Context) bool {
	for {
		a.mu.Lock()
		unanswered, writing, failed, changed := a.unanswered, a.writing, a.failed, a.changed
		a.mu.Unlock()
		if unanswered > 0 || writing == 0 {
			return unanswered > 0 || failed
		}
		select {
		case <-ctx.Done():
			return true
		case <-changed:
		}
	}
}
