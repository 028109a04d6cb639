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
// the client sent (requestid.go), and a cancelled request is answered too
// (the end of input waits for it), but once its client's
// notifications/cancelled is read (cancelled) a reader gone before its
// answer lost nothing: that client wants none.
//
// An answer leaves the list of ids before it is written, as the client may
// reuse the id once it reads it, but the end waits until it is written:
// the end closes the output, and an answer noted and not yet written was
// lost when the end overtook its write.
type inflight struct {
	mu      sync.Mutex
	ids     map[string]bool // by callKey: true once the client cancelled it
	cancels int             // the ids cancelled
	writing int             // answers noted and not yet written
	failed  bool            // an answer's write failed
	// shut: a wait saw the output's reader gone, so the connection ends;
	// a request read after is dropped, never run, as nobody can read its
	// answer (it stays out of the count wait's verdict was made on).
	shut bool
	// sent: the output's reader is gone and what the client had sent is
	// read (readSent): a request is counted unanswered, not run.
	sent    bool
	changed chan struct{} // closed, and replaced, when an answer's write ends
}

func newInflight() *inflight {
	return &inflight{ids: map[string]bool{}, changed: make(chan struct{})}
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
	if f.shut {
		return []byte{} // dropped: the connection is ending
	}
	if f.sent {
		if _, ok := f.ids[a.key]; !ok {
			f.ids[a.key] = false // unanswered: nobody can read its answer
		}
		return []byte{} // not run
	}
	if _, running := f.ids[a.key]; running {
		return duplicateReply(r.raw)
	}
	f.ids[a.key] = false
	return nil
}

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
	f.writing++
	if cancelled {
		f.cancels--
		return func(error) { f.written(nil) } // wanted by nobody: its loss is none
	}
	return f.written
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
	f.cancels++
	close(f.changed)
	f.changed = make(chan struct{})
}

func (f *inflight) written(err error) {
	f.mu.Lock()
	f.writing--
	f.failed = f.failed || err != nil
	close(f.changed)
	f.changed = make(chan struct{})
	f.mu.Unlock()
}

// wait returns nil once every request admitted was answered and its
// answer written; ctx's error if ctx ended first (a signal), and, once
// gone is closed (nobody reads the answers: the client closed its end, or
// died), ErrOutputGone if a request is unanswered or an answer's write
// failed, else nil. The calls left are then cancelled as the connection
// ends, and no request admitted after. Writes under way when gone closes
// are waited for (the reader's end fails them at once), as the client may
// have read the answer whole before it left: before, such an answer,
// written and read, was reported lost when the writer had not yet noted
// its write done. More than one wait may run at once (the end of input's,
// and the reader's end seen first).
func (f *inflight) wait(ctx context.Context, gone <-chan struct{}) error {
	readerGone := false
	for {
		// gone is looked at before each verdict, not only while waiting:
		// a write that failed for want of a reader (which closes gone) may
		// have ended before the wait began, and left nothing to wait for.
		select {
		case <-gone:
			readerGone, gone = true, nil
		default:
		}
		f.mu.Lock()
		unanswered, writing, failed, changed := len(f.ids), f.writing, f.failed, f.changed
		wanted := unanswered - f.cancels // the answers a reader gone would have lost
		var err error
		done := true
		switch {
		case readerGone && (wanted > 0 || writing == 0 && failed):
			err = ErrOutputGone
		case readerGone && writing == 0:
		case unanswered+writing > 0:
			done = false
		}
		f.shut = f.shut || done && readerGone
		f.mu.Unlock()
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
