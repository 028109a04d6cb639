package mcp

import (
	"context"
	"errors"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/evalhost/evalhost/internal/owed"
)

// inflight holds the ids of the client's requests the server has not
// answered yet, so that the end of stdin waits for their answers: a client
// that writes its requests and closes stdin (echo '…' | evalhost mcp) got
// none, as the SDK ends the connection, and cancels every call, at EOF.
// It holds exactly the requests that will be answered: admit answers itself
// every request the SDK (or the fast path) would not answer under the id
// the client sent (requestid.go), and a cancelled request is answered too
// (the end of input waits for it), but once its client's
// notifications/cancelled is read (cancelled) a reader gone before its
// answer lost nothing: that client wants none.
//
// The count of answers owed, written and failed, and the verdict when the
// output's reader goes, are internal/owed's (serve judges its end by the
// same); inflight keeps what is MCP's: the ids, each admitted once, and
// which of them the client cancelled.
type inflight struct {
	mu  sync.Mutex
	ids map[string]bool // by callKey: true once the client cancelled it
	// answers counts the ids' answers: one accepted per id, waived when
	// cancelled. Its verdict on a gone reader (wait) closes it: a request
	// read after is dropped, never run, as nobody can read its answer.
	answers owed.Answers
	// sent: the output's reader is gone and what the client had sent is
	// read (readSent): a request is counted unanswered, not run.
	sent bool
}

func newInflight() *inflight {
	return &inflight{ids: map[string]bool{}}
}

// admit notes a line about to be passed on (plain: a plainRequest, which
// decodeLine reads with gjson) and returns nil, or the reply to write
// instead of passing it on: an error for an id the server could not
// answer as sent, or for the id of a request not answered yet; empty (no
// reply, the line dropped) once the connection ends for want of a reader.
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
	if f.answers.Closed() {
		return []byte{} // dropped: the connection is ending
	}
	if f.sent {
		if _, ok := f.ids[a.key]; !ok && f.answers.Accept() {
			f.ids[a.key] = false // owed and unanswered: nobody can read its answer
		}
		return []byte{} // not run
	}
	if _, running := f.ids[a.key]; running {
		return duplicateReply(r.raw)
	}
	if !f.answers.Accept() {
		return []byte{} // closed since: dropped as above
	}
	f.ids[a.key] = false
	return nil
}

// replied notes how the write of an answer the connection made itself
// ended (a parse error's, lineGuard.reply): never admitted, it is lost
// only when its write failed.
func (f *inflight) replied(err error) { f.answers.Replied(err) }

// readingSent notes that the requests read from now on were sent before
// the output's reader left: each is counted unanswered and dropped.
func (f *inflight) readingSent() {
	f.mu.Lock()
	f.sent = true
	f.mu.Unlock()
}

// answering notes the response to the request with this id, before it is
// written, and returns what to call with the write's error once it ended
// (nil: written; an answer not written at all is an error too). Every
// answer's write must call it: the end of input waits for it.
func (f *inflight) answering(id jsonrpc.ID) (written func(error)) {
	k := callKey(id)
	f.mu.Lock()
	defer f.mu.Unlock()
	cancelled, ok := f.ids[k]
	if !ok || k == "" {
		return func(error) {} // not a request admitted (or answered twice)
	}
	delete(f.ids, k)
	if cancelled {
		return f.answers.AnsweringWaived() // wanted by nobody: its loss is none
	}
	return f.answers.Answering()
}

// cancelled notes the request a notifications/cancelled names: its client
// wants no answer (MCP's cancellation: one that comes is ignored), so it
// is not lost when the output's reader goes before it was answered, nor
// is its answer's failed write. The end of input still waits for it, as
// for every request read.
func (f *inflight) cancelled(id jsonrpc.ID) {
	k := callKey(id)
	f.mu.Lock()
	defer f.mu.Unlock()
	if was, ok := f.ids[k]; !ok || was || k == "" {
		return
	}
	f.ids[k] = true
	f.answers.Waive()
}

// wait returns nil once every request admitted was answered and its
// answer written; ctx's error if ctx ended first (a signal), and, once
// gone is closed (nobody reads the answers: the client closed its end, or
// died), ErrOutputGone if a request not cancelled is unanswered or an
// answer's write failed, else nil. The calls left are then cancelled as
// the connection ends, and no request admitted after. Writes under way
// when gone closes are waited for (the reader's end fails them at once),
// as the client may have read the answer whole before it left. More than one wait may run at once (the
// end of input's, and the reader's end seen first). See owed.Answers.Wait.
func (f *inflight) wait(ctx context.Context, gone <-chan struct{}) error {
	err := f.answers.Wait(ctx, gone)
	if errors.Is(err, owed.ErrLost) {
		return ErrOutputGone
	}
	return err
}
