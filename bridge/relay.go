package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
)

// ErrNotPending is returned by Relay.Resolve for a call id that is not
// waiting: never sent, already answered, abandoned, or failed by Close.
var ErrNotPending = errors.New("tool call is not pending")

// Relay is a Tools that hands each call to a client and waits for its answer:
// `serve` writes a tool_call line from send and calls Resolve when the
// client's tool_result arrives. It is the one record of the calls waiting
// for an answer; the Server's runs (TrackRun) name the request and cell each
// call comes from (Call.Request, Call.Cell).
type Relay struct {
	send    func(callID string, c Call) error
	abandon func(callID string)

	mu      sync.Mutex
	next    uint64
	pending map[string]chan result
	closed  error // set by Close: every call fails with it
}

// NewRelay makes a Relay. send delivers a call to the client under a fresh
// call id ("c1", "c2", …) and must not block on the answer; abandon, if not
// nil, is told of calls whose context ended before an answer (a cell that
// ended or timed out), so the client can stop working on them.
func NewRelay(send func(callID string, c Call) error, abandon func(callID string)) *Relay {
	return &Relay{send: send, abandon: abandon, pending: map[string]chan result{}}
}

// Call sends c and waits for Resolve, Close or the end of ctx.
func (r *Relay) Call(ctx context.Context, c Call) (json.RawMessage, error) {
	ch := make(chan result, 1)
	r.mu.Lock()
	if r.closed != nil {
		err := r.closed
		r.mu.Unlock()
		return nil, err
	}
	r.next++
	id := "c" + strconv.FormatUint(r.next, 10)
	r.pending[id] = ch
	r.mu.Unlock()
	if err := r.send(id, c); err != nil {
		r.forget(id)
		return nil, fmt.Errorf("cannot pass tool %q to the client: %w", c.Name, err)
	}
	select {
	case res := <-ch:
		return res.value, res.err
	case <-ctx.Done():
		if r.forget(id) && r.abandon != nil {
			r.abandon(id)
		}
		return nil, context.Cause(ctx)
	}
}

// forget drops a pending call; false when it was already answered.
func (r *Relay) forget(id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.pending[id]
	delete(r.pending, id)
	return ok
}

// Resolve answers call id: with value when ok, else with errMsg as the
// error Python sees. value must be valid JSON (empty means null).
func (r *Relay) Resolve(id string, ok bool, value json.RawMessage, errMsg string) error {
	var res result
	switch {
	case !ok:
		if errMsg == "" {
			errMsg = "tool failed without a message"
		}
		res.err = errors.New(errMsg)
	case len(value) == 0:
		res.value = json.RawMessage("null")
	case !json.Valid(value):
		return fmt.Errorf("tool_result for %q: value is not valid JSON", id)
	default:
		res.value = value
	}
	r.mu.Lock()
	ch, found := r.pending[id]
	delete(r.pending, id)
	r.mu.Unlock()
	if !found {
		return fmt.Errorf("tool_result for %q: %w (never sent, already answered, or its cell ended)", id, ErrNotPending)
	}
	ch <- res
	return nil
}

// Close fails every call waiting for an answer with err, and every later
// call without sending it: for a client that can no longer answer (it stopped
// reading), so a cell gets a clear error at once instead of waiting for its
// timeout. The calls it fails are not abandoned (the client hears nothing
// more). A nil err means ErrClosed. Safe to call twice; the first err stays.
func (r *Relay) Close(err error) {
	if err == nil {
		err = ErrClosed
	}
	r.mu.Lock()
	if r.closed != nil {
		r.mu.Unlock()
		return
	}
	r.closed = err
	pending := r.pending
	r.pending = map[string]chan result{}
	r.mu.Unlock()
	for _, ch := range pending {
		ch <- result{err: err}
	}
}

// Pending is the number of calls waiting for an answer.
func (r *Relay) Pending() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.pending)
}
