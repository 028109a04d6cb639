package mcp

import (
	"context"
	"strconv"
	"sync"

	"github.com/tidwall/gjson"
)

// inflight counts the client's requests the server has not answered yet,
// so that the end of stdin waits for their answers: a client that writes
// its requests and closes stdin (echo '…' | evalhost mcp) got none, as the
// SDK ends the connection, and cancels every call, at EOF.
type inflight struct {
	mu      sync.Mutex
	ids     map[string]int
	changed chan struct{} // a request was answered
}

func newInflight() *inflight {
	return &inflight{ids: map[string]int{}, changed: make(chan struct{}, 1)}
}

// idKey names a message's id whichever way it was spelled (1, 1.0; "a",
// "\u0061"), as the SDK re-encodes it; "" for a missing or invalid id.
func idKey(v gjson.Result) string {
	switch v.Type {
	case gjson.String:
		return "s" + v.Str
	case gjson.Number:
		return "n" + strconv.FormatFloat(v.Num, 'f', -1, 64)
	}
	return ""
}

// received notes a line passed to the SDK: a request to answer, or the
// cancellation of one, which gets no answer.
func (f *inflight) received(line []byte) {
	m := gjson.ParseBytes(line)
	method := m.Get("method")
	if !method.Exists() {
		return
	}
	if method.Str == "notifications/cancelled" {
		f.done(idKey(m.Get("params.requestId")))
		return
	}
	if k := idKey(m.Get("id")); k != "" {
		f.mu.Lock()
		f.ids[k]++
		f.mu.Unlock()
	}
}

// count is how many requests with this idKey were read and not answered.
func (f *inflight) count(k string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ids[k]
}

// sent notes a message the server wrote: a response answers a request.
func (f *inflight) sent(msg []byte) {
	m := gjson.ParseBytes(msg)
	if m.Get("method").Exists() {
		return // the server's own request or notification
	}
	f.done(idKey(m.Get("id")))
}

func (f *inflight) done(k string) {
	if k == "" {
		return
	}
	f.mu.Lock()
	if f.ids[k] > 1 {
		f.ids[k]--
	} else {
		delete(f.ids, k)
	}
	f.mu.Unlock()
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// wait returns once every request received was answered, or ctx ended
// (a signal: the calls are then cancelled as the connection ends).
func (f *inflight) wait(ctx context.Context) {
	for {
		f.mu.Lock()
		n := len(f.ids)
		f.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-f.changed:
		}
	}
}
