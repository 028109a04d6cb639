package mcp

import (
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// inflight holds the ids of the client's requests the server has not
// answered yet, so that the end of stdin waits for their answers: a client
// that writes its requests and closes stdin (echo '…' | evalhost mcp) got
// none, as the SDK ends the connection, and cancels every call, at EOF.
// It holds exactly the requests that will be answered: admit answers itself
// every request the SDK (or the fast path) would not answer under the id
// the client sent (requestid.go), and a cancelled request is answered too.
//
// An answer leaves the list of ids before it is written, as the client may
// reuse the id once it reads it, but the end waits until it is written:
// the end closes the output, and an answer noted and not yet written was
// lost when the end overtook its write.
type inflight struct {
	mu      sync.Mutex
	ids     map[string]struct{} // by callKey
	writing int                 // answers noted and not yet written
	failed  bool                // an answer's write failed
	changed chan struct{}       // an answer's write ended
}

func newInflight() *inflight {
	return &inflight{ids: map[string]struct{}{}, changed: make(chan struct{}, 1)}
}

// admit notes a line about to be passed on (plain: a plainRequest, which
// decodeLine reads with gjson) and returns nil, or the reply to write
// instead of passing it on: an error for an id the server could not
// answer as sent, or for the id of a request not answered yet.
func (f *inflight) admit(line []byte, plain bool) []byte {
	r, ok := readRequestID(line, plain)
	if !ok {
		return nil
	}
	a := admitID(r)
	if a.reply != nil || a.key == "" {
		return a.reply
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, running := f.ids[a.key]; running {
		return duplicateReply(r.raw)
	}
	f.ids[a.key] = struct{}{}
	return nil
}

// answering notes the response to the request with this id, before it is
// written, and returns what to call with the write's error once it ended
// (nil: written; an answer not written at all is an error too). Every
// answer's write must call it: the end of input waits for it.
func (f *inflight) answering(id jsonrpc.ID) (written func(error)) {
	k := callKey(id)
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.ids[k]; !ok || k == "" {
		return func(error) {} // not a request admitted (or answered twice)
	}
	delete(f.ids, k)
	f.writing++
	return f.written
}

func (f *inflight) written(err error) {
	f.mu.Lock()
	f.writing--
	f.failed = f.failed || err != nil
	f.mu.Unlock()
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// wait returns nil once every request admitted was answered and its
// answer written; ctx's error if ctx ended first (a signal), ErrOutputGone
// if gone closed first (nobody reads the answers: the client died) with a
// request unanswered, or an answer whose write failed. The calls left are
// then cancelled as the connection ends. Writes under way when gone
// closes are waited for (the reader's end fails them at once), as the
// client may have read the answer whole before it left: before, such an
// answer, written and read, was reported lost when the writer had not yet
// noted its write done.
func (f *inflight) wait(ctx context.Context, gone <-chan struct{}) error {
	readerGone := false
	for {
		f.mu.Lock()
		unanswered, writing, failed := len(f.ids), f.writing, f.failed
		f.mu.Unlock()
		switch {
		case unanswered+writing == 0 && readerGone && failed:
			return ErrOutputGone
		case unanswered+writing == 0:
			return nil
		case unanswered > 0 && readerGone:
			return ErrOutputGone
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-gone:
			readerGone, gone = true, nil
		case <-f.changed:
		}
	}
}
