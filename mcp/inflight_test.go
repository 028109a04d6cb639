package mcp

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The end of input's wait, told that the output's reader is gone, returns
// ErrOutputGone only for an answer that did not reach the output: a
// request not answered yet, or an answer whose write failed. An answer
// whose write was under way then is waited for: before, wait returned
// ErrOutputGone at once, so a client that read its last answer and closed
// both ends while the writer had not yet noted the write done (a loaded
// machine) was told its calls were cancelled, unanswered.
func TestInflightWaitReaderGone(t *testing.T) {
	for _, tc := range []struct {
		name       string
		answered   bool  // the request's answer is being written when the reader goes
		writeErr   error // how that write ends
		want       error
		wantAtGone bool // wait returns before the write ends
	}{
		{"the answer written", true, nil, nil, false},
		{"the answer's write failed", true, errors.New("broken pipe"), ErrOutputGone, false},
		{"the request unanswered", false, nil, ErrOutputGone, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newInflight()
				if f.admit([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`), true) != nil {
					t.Fatal("the request was refused")
				}
				var written func(error)
				if tc.answered {
					id, _ := jsonrpc.MakeID(float64(1))
					written = f.answering(id)
				}
				gone := make(chan struct{})
				close(gone)
				res := make(chan error, 1)
				go func() { res <- f.wait(context.Background(), gone) }()
				synctest.Wait() // wait has returned, or blocks
				select {
				case err := <-res:
					if !tc.wantAtGone {
						t.Fatalf("wait returned %v with a write under way; want it to wait for the write", err)
					}
					if !errors.Is(err, tc.want) {
						t.Fatalf("wait returned %v, want %v", err, tc.want)
					}
					return
				default:
					if tc.wantAtGone {
						t.Fatal("wait blocks with a request unanswered and its reader gone")
					}
				}
				written(tc.writeErr)
				if err := <-res; err != tc.want {
					t.Fatalf("wait returned %v, want %v", err, tc.want)
				}
			})
		})
	}
}

// The end of input and the reader's end seen first both wait for the
// answers being written, and both return once the write ends (a wake-up
// taken by one of them left the other blocked); the verdict made, a
// request read after it is dropped, never run, so that the verdict stays
// true: "nothing was cut short" must not be followed by a call started
// for a client that cannot read its answer.
func TestInflightWaitTwoWaitersThenShut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newInflight()
		if f.admit([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`), true) != nil {
			t.Fatal("the request was refused")
		}
		id, _ := jsonrpc.MakeID(float64(1))
		written := f.answering(id)
		gone := make(chan struct{})
		close(gone)
		res := make(chan error, 2)
		for range 2 {
			go func() { res <- f.wait(context.Background(), gone) }()
		}
		synctest.Wait()
		written(nil)
		for i := range 2 {
			if err := <-res; err != nil {
				t.Fatalf("wait %d returned %v, want nil", i, err)
			}
		}
		if reply := f.admit([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}`), true); reply == nil || len(reply) != 0 {
			t.Fatalf("a request read after the verdict: admit returned %q, want it dropped (empty)", reply)
		}
	})
}

// A request the client cancelled (notifications/cancelled) wants no
// answer, as MCP's cancellation has the client ignore one: a reader gone
// before it was answered, or whose answer's write then failed, lost
// nothing. The end of input still waits for its answer, as for any
// request read. A client that cancelled its call and closed at once was
// told (exit 141) that a call was cut short.
func TestInflightCancelledWantsNoAnswer(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cancel string // the cancellation's requestId, as JSON
		gone   bool   // the output's reader is gone
		// waits: wait blocks until the answer's write ends, which fails
		waits bool
		want  error
	}{
		{"cancelled, the reader gone", `1`, true, false, nil},
		{"cancelled, the input ended", `1`, false, true, nil},
		{"another id cancelled, the reader gone", `2`, true, false, ErrOutputGone},
		{"a string id that names no request", `"1"`, true, false, ErrOutputGone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newInflight()
				if f.admit([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`), true) != nil {
					t.Fatal("the request was refused")
				}
				m, err := decodeLine([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+tc.cancel+`}}`), false)
				if err != nil {
					t.Fatal(err)
				}
				id, ok := cancelledID(m.(*jsonrpc.Request))
				if !ok {
					t.Fatal("the cancellation names no id")
				}
				f.cancelled(id)
				gone := make(chan struct{})
				if tc.gone {
					close(gone)
				}
				res := make(chan error, 1)
				go func() { res <- f.wait(context.Background(), gone) }()
				synctest.Wait()
				if tc.waits {
					select {
					case err := <-res:
						t.Fatalf("wait returned %v before the cancelled call was answered; want it to wait", err)
					default:
					}
					answer, _ := jsonrpc.MakeID(float64(1))
					f.answering(answer)(errors.New("broken pipe"))
					synctest.Wait()
				}
				select {
				case err := <-res:
					if err != tc.want {
						t.Fatalf("wait returned %v, want %v", err, tc.want)
					}
				default:
					t.Fatalf("wait blocks; want %v", tc.want)
				}
			})
		})
	}
}

// The verdict on a gone reader does not depend on whether the wait began
// before or after the last answer's write ended: an answer whose write
// failed before the wait, its reader already gone, was lost (the write's
// EPIPE is what closes gone, and RunStdio's wait can start after it).
// Before, a wait that found nothing owed at its first look returned nil,
// not ErrOutputGone, without looking at gone: the exit said nothing was
// lost.
func TestInflightWaitAfterTheWriteEnded(t *testing.T) {
	for _, tc := range []struct {
		name     string
		writeErr error
		want     error
	}{
		{"the answer written", nil, nil},
		{"the answer's write failed", errors.New("broken pipe"), ErrOutputGone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newInflight()
			if f.admit([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`), true) != nil {
				t.Fatal("the request was refused")
			}
			id, _ := jsonrpc.MakeID(float64(1))
			f.answering(id)(tc.writeErr)
			gone := make(chan struct{})
			close(gone)
			if err := f.wait(context.Background(), gone); err != tc.want {
				t.Fatalf("wait returned %v, want %v", err, tc.want)
			}
		})
	}
}
