package owed

import (
	"context"
	"errors"
	"sync"
)

// ErrLost is Wait's verdict when the output's reader left before an
// answer it wanted was written.
var ErrLost = errors.New("owed: the output's reader is gone with an answer not written")

// Answers counts the answers owed, being written and failed (doc.go).
type Answers struct {
	mu      sync.Mutex
	owed    int           // accepted, their answer's write not begun
	waived  int           // of owed, those nobody wants any more
	writing int           // answers whose write is under way
	failed  bool          // an answer's write failed (a waived one's does not count)
	closed  bool          // a Wait gave its verdict on a gone reader
	changed chan struct{} // made by a Wait; closed, and dropped, when a write ends or an answer is waived
}

// Accept counts a request taken, whose answer will be written later. It
// returns false, counting nothing, once a Wait gave its verdict on a gone
// reader: nobody can read the answer, so the request is not to be run.
func (a *Answers) Accept() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return false
	}
	a.owed++
	return true
}

// Closed reports whether a Wait gave its verdict on a gone reader.
func (a *Answers) Closed() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.closed
}

// Waive notes that an accepted answer is wanted by nobody any more: its
// loss is none. The caller waives each answer at most once, and answers
// it with AnsweringWaived.
func (a *Answers) Waive() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.owed-a.waived <= 0 {
		panic("owed: Waive with no answer owed")
	}
	a.waived++
	a.broadcastLocked()
}

// Answering notes an accepted answer about to be written, and returns
// what to call, once, with the write's error when it ended.
func (a *Answers) Answering() (written func(error)) { return a.answering(false) }

// AnsweringWaived is Answering for an answer Waive noted: its write's
// failure is no loss.
func (a *Answers) AnsweringWaived() (written func(error)) { return a.answering(true) }

func (a *Answers) answering(waived bool) func(error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case waived && a.waived == 0:
		panic("owed: AnsweringWaived with no answer waived")
	case !waived && a.owed-a.waived == 0:
		panic("owed: Answering with no answer owed")
	case waived:
		a.waived--
	}
	a.owed--
	a.writing++
	done := false
	return func(err error) {
		a.mu.Lock()
		defer a.mu.Unlock()
		if done {
			panic("owed: an answer's write noted twice")
		}
		done = true
		a.writing--
		a.failed = a.failed || err != nil && !waived
		a.broadcastLocked()
	}
}

// Replied notes the write of an answer made at once, never accepted: only
// its failure counts. It wakes no Wait: a failure changes a verdict only
// once no write is under way, and the last write's end wakes them.
func (a *Answers) Replied(err error) {
	if err != nil {
		a.mu.Lock()
		a.failed = true
		a.mu.Unlock()
	}
}

// CutShort reports whether an answer wanted is owed, its write not begun.
func (a *Answers) CutShort() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.owed-a.waived > 0
}

// Wait returns once the answers are settled: with gone open, nil when no
// answer is owed or being written; once gone is closed, when no write is
// under way or an answer wanted is owed, ErrLost if one is or an answer's
// write failed, else nil (and Accept is refused from then on); ctx's
// error if ctx ends first.
func (a *Answers) Wait(ctx context.Context, gone <-chan struct{}) error {
	readerGone := false
	for {
		// gone is looked at before each verdict, not only while waiting:
		// a write that failed for want of a reader (which closes gone)
		// may have ended before the wait began, leaving nothing to wait for.
		select {
		case <-gone:
			readerGone, gone = true, nil
		default:
		}
		a.mu.Lock()
		err, done := a.verdictLocked(readerGone)
		a.closed = a.closed || done && readerGone
		changed := a.changedLocked()
		a.mu.Unlock()
		if done {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-gone:
			readerGone, gone = true, nil
		case <-changed:
		}
	}
}

// verdictLocked is Wait's verdict now, and whether it is final.
func (a *Answers) verdictLocked(readerGone bool) (err error, done bool) {
	switch {
	case readerGone && (a.owed-a.waived > 0 || a.writing == 0 && a.failed):
		return ErrLost, true
	case readerGone && a.writing == 0:
		return nil, true
	case a.owed+a.writing > 0: // gone: a write under way, which the client may read whole
		return nil, false
	}
	return nil, true
}

func (a *Answers) changedLocked() chan struct{} {
	if a.changed == nil {
		a.changed = make(chan struct{})
	}
	return a.changed
}

// broadcastLocked wakes every Wait.
func (a *Answers) broadcastLocked() {
	if a.changed != nil {
		close(a.changed)
		a.changed = nil
	}
}
