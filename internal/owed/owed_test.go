package owed

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
)

var errPipe = errors.New("broken pipe")

// state builds a count: accepted answers (waived of them waived), writes
// begun and left under way, writes ended with these errors (a nil ends
// one written), and replies made at once with these errors.
type state struct {
	accepted, waived, writing int
	written, waivedWritten    []error // writes ended, of answers wanted / waived
	replied                   []error
}

func (s state) build(t *testing.T) *Answers {
	t.Helper()
	a := new(Answers)
	for range s.accepted + s.writing + len(s.written) + len(s.waivedWritten) {
		if !a.Accept() {
			t.Fatal("Accept refused on a new count")
		}
	}
	for range s.waived + len(s.waivedWritten) {
		a.Waive()
	}
	for _, err := range s.written {
		a.Answering()(err)
	}
	for _, err := range s.waivedWritten {
		a.AnsweringWaived()(err)
	}
	for range s.writing {
		a.Answering()
	}
	for _, err := range s.replied {
		a.Replied(err)
	}
	return a
}

// waitNow runs Wait in a bubble and reports what it returned, or that it
// blocks (it is then left blocked until the bubble's context ends).
func waitNow(t *testing.T, a *Answers, gone bool) (err error, blocks bool) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		g := make(chan struct{})
		if gone {
			close(g)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		res := make(chan error, 1)
		go func() { res <- a.Wait(ctx, g) }()
		synctest.Wait()
		select {
		case err = <-res:
		default:
			blocks = true
			cancel()
			<-res
		}
	})
	return err, blocks
}

// Wait's verdict on each count, with the output's reader there (the end
// of input: every answer waited for, failures not judged) and gone
// (writes under way waited for; a lost answer is ErrLost), and CutShort's.
func TestVerdict(t *testing.T) {
	for _, tc := range []struct {
		name     string
		s        state
		gone     bool
		want     error
		blocks   bool
		cutShort bool
	}{
		{name: "nothing owed, reader there"},
		{name: "nothing owed, reader gone", gone: true},
		{name: "an answer owed, reader there", s: state{accepted: 1}, blocks: true, cutShort: true},
		{name: "an answer owed, reader gone", s: state{accepted: 1}, gone: true, want: ErrLost, cutShort: true},
		{name: "a write under way, reader there", s: state{writing: 1}, blocks: true},
		{name: "a write under way, reader gone", s: state{writing: 1}, gone: true, blocks: true},
		{name: "an answer owed and a write under way, reader gone", s: state{accepted: 1, writing: 1}, gone: true, want: ErrLost, cutShort: true},
		{name: "every answer written, reader there", s: state{written: []error{nil, nil}}},
		{name: "every answer written, reader gone", s: state{written: []error{nil, nil}}, gone: true},
		{name: "a write failed, reader there", s: state{written: []error{errPipe}}},
		{name: "a write failed, reader gone", s: state{written: []error{nil, errPipe}}, gone: true, want: ErrLost},
		{name: "a write failed and one under way, reader gone", s: state{writing: 1, written: []error{errPipe}}, gone: true, blocks: true},
		{name: "a reply written, reader gone", s: state{replied: []error{nil}}, gone: true},
		{name: "a reply failed, reader there", s: state{replied: []error{errPipe}}},
		{name: "a reply failed, reader gone", s: state{replied: []error{errPipe}}, gone: true, want: ErrLost},
		{name: "a waived answer owed, reader there", s: state{accepted: 1, waived: 1}, blocks: true},
		{name: "a waived answer owed, reader gone", s: state{accepted: 1, waived: 1}, gone: true},
		{name: "a waived answer and one wanted owed, reader gone", s: state{accepted: 2, waived: 1}, gone: true, want: ErrLost, cutShort: true},
		{name: "a waived answer's write failed, reader gone", s: state{waivedWritten: []error{errPipe}}, gone: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.s.build(t)
			if got := a.CutShort(); got != tc.cutShort {
				t.Errorf("CutShort() = %v, want %v", got, tc.cutShort)
			}
			err, blocks := waitNow(t, a, tc.gone)
			switch {
			case blocks != tc.blocks:
				t.Fatalf("Wait blocks: %v, want %v (it returned %v)", blocks, tc.blocks, err)
			case !errors.Is(err, tc.want) || tc.want == nil && err != nil:
				t.Fatalf("Wait returned %v, want %v", err, tc.want)
			}
			// A verdict on a gone reader closes the count; none other does.
			if closed := tc.gone && !tc.blocks; a.Closed() != closed || a.Accept() == closed {
				t.Fatalf("after Wait: Closed() = %v, want %v, and Accept should agree", a.Closed(), closed)
			}
		})
	}
}

// Once the reader is gone, an answer being written is waited for, as the
// client may have read it whole before it left, and the verdict follows
// how its write ends; an answer not begun is lost at once. (Moved from
// serve's TestAnswersLost, which tested the same count there; mcp's
// TestInflightWaitReaderGone holds its wrapper to it.) The reader may go
// before the wait or during it.
func TestWaitForTheWriteUnderWay(t *testing.T) {
	for _, tc := range []struct {
		name       string
		answering  bool  // the answer's write is under way
		writeErr   error // how that write ends
		goneDuring bool  // the reader goes once Wait blocks, not before
		want       error
		wantAtOnce bool // Wait returns before the write ends
	}{
		{"the answer written", true, nil, false, nil, false},
		{"the answer's write failed", true, errPipe, false, ErrLost, false},
		{"the request unanswered", false, nil, false, ErrLost, true},
		{"the answer written, the reader gone during the wait", true, nil, true, nil, false},
		{"the answer's write failed, the reader gone during the wait", true, errPipe, true, ErrLost, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var a Answers
				a.Accept()
				var written func(error)
				if tc.answering {
					written = a.Answering()
				}
				gone := make(chan struct{})
				if !tc.goneDuring {
					close(gone)
				}
				res := make(chan error, 1)
				go func() { res <- a.Wait(context.Background(), gone) }()
				synctest.Wait()
				if tc.goneDuring {
					close(gone)
					synctest.Wait()
				}
				select {
				case err := <-res:
					if !tc.wantAtOnce || err != tc.want {
						t.Fatalf("Wait returned %v at once; want %v, after the write: %v", err, tc.want, !tc.wantAtOnce)
					}
					return
				default:
					if tc.wantAtOnce {
						t.Fatal("Wait blocks with a request unanswered and its reader gone")
					}
				}
				written(tc.writeErr)
				if err := <-res; err != tc.want {
					t.Fatalf("Wait returned %v, want %v", err, tc.want)
				}
			})
		})
	}
}

// Every Wait blocked wakes when a write ends (one woken must not take the
// others' wake-up), and a waiver wakes them too; the verdict on the gone
// reader given, Accept is refused.
func TestWaitersAllWake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var a Answers
		a.Accept()
		a.Accept()
		written := a.Answering()
		gone := make(chan struct{})
		res := make(chan error, 3)
		for range 2 {
			go func() { res <- a.Wait(context.Background(), gone) }()
		}
		// This one waits while the reader is there: for every answer.
		go func() { res <- a.Wait(context.Background(), nil) }()
		synctest.Wait()
		a.Waive() // wakes them; the waived answer is still owed
		synctest.Wait()
		close(gone)
		written(nil)
		for i := range 2 {
			if err := <-res; err != nil {
				t.Fatalf("Wait %d returned %v, want nil", i, err)
			}
		}
		if a.Accept() {
			t.Fatal("Accept counted a request after the verdict on a gone reader")
		}
		select {
		case err := <-res:
			t.Fatalf("the end of input's Wait returned %v with a waived answer owed", err)
		default:
		}
		a.AnsweringWaived()(errPipe)
		if err := <-res; err != nil {
			t.Fatalf("the end of input's Wait returned %v, want nil", err)
		}
	})
}

// The end of ctx ends a Wait with ctx's error, and gives no verdict.
func TestWaitContextEnds(t *testing.T) {
	for _, gone := range []bool{false, true} {
		t.Run(map[bool]string{false: "reader there", true: "reader gone"}[gone], func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var a Answers
				a.Accept()
				a.Answering()
				g := make(chan struct{})
				if gone {
					close(g)
				}
				ctx, cancel := context.WithCancel(context.Background())
				res := make(chan error, 1)
				go func() { res <- a.Wait(ctx, g) }()
				synctest.Wait()
				cancel()
				if err := <-res; !errors.Is(err, context.Canceled) {
					t.Fatalf("Wait returned %v, want %v", err, context.Canceled)
				}
				if a.Closed() {
					t.Fatal("a Wait ended by its context closed the count")
				}
			})
		})
	}
}

// A wrong call panics at once, where the mistake is, not at a wrong exit
// code later.
func TestWrongCallsPanic(t *testing.T) {
	for _, tc := range []struct {
		name string
		call func(a *Answers)
		want string
	}{
		{"Answering with nothing accepted", func(a *Answers) { a.Answering() }, "owed: Answering with no answer owed"},
		{"Answering an answer waived", func(a *Answers) { a.Accept(); a.Waive(); a.Answering() }, "owed: Answering with no answer owed"},
		{"Answering twice for one request", func(a *Answers) { a.Accept(); a.Answering()(nil); a.Answering() }, "owed: Answering with no answer owed"},
		{"AnsweringWaived with none waived", func(a *Answers) { a.Accept(); a.AnsweringWaived() }, "owed: AnsweringWaived with no answer waived"},
		{"Waive with nothing accepted", func(a *Answers) { a.Waive() }, "owed: Waive with no answer owed"},
		{"Waive twice for one request", func(a *Answers) { a.Accept(); a.Waive(); a.Waive() }, "owed: Waive with no answer owed"},
		{"a write noted twice", func(a *Answers) {
			a.Accept()
			w := a.Answering()
			w(nil)
			w(nil)
		}, "owed: an answer's write noted twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if got := recover(); got != tc.want {
					t.Fatalf("panicked with %v, want %q", got, tc.want)
				}
			}()
			tc.call(new(Answers))
		})
	}
}
