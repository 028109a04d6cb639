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
	changed chan struct{}       // an answer was written
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
// written, and returns what to call once the write is done (or failed).
// Every answer's write must call it: the end of input waits for it.
func (f *inflight) answering(id jsonrpc.ID) (written func()) {
	k := callKey(id)
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.ids[k]; !ok || k == "" {
		return func() {} // not a request admitted (or answered twice)
	}
	delete(f.ids, k)
	f.writing++
	return f.written
}

func (f *inflight) written() {
	f.mu.Lock()
	f.writing--
	f.mu.Unlock()
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

// wait returns nil once every request admitted was answered and its
// answer written; ctx's error if ctx ended first (a signal), ErrOutputGone
// if gone closed first (nobody reads the answers: the client died). The
// calls left are then cancelled as the connection ends.
func (f *inflight) wait(ctx context.Context, gone <-chan struct{}) error {
	for {
		f.mu.Lock()
		n := len(f.ids) + f.writing
		f.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-gone:
			return ErrOutputGone
		case <-f.changed:
		}
	}
}
