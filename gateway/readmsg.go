package gateway

import (
	"context"
	"io"
	"sync/atomic"

	"github.com/coder/websocket"
)

// A kernel message can be hundreds of MiB (a cell displaying a large text
// or image), and its size is not known until it has been read: the
// websocket frame's length is not exposed. io.ReadAll's growing buffer held
// up to 2.25 times the message while it grew, and decoding copied it twice
// more (the envelope's content, then the display's data), about 4 times in
// all. So a message is read in chunks and assembled once in a buffer of its
// exact size (twice the message for that copy, then once), which decoding
// slices instead of copying (decodeMessage).
//
// The reads are small (readStep), and each one counts as a sign of life:
// a message arriving slowly holds back the pong of a ping (it is one
// websocket frame) and every other message, so the keep-alive and the idle
// watch must not mistake it for a silent gateway.

const (
	readStep = 64 << 10 // bytes per read, so that progress is seen on a slow link
	maxChunk = 1 << 20  // the largest chunk: little left unused in the last one
)

// msgReader reads a kernel's websocket messages; the kernel's reader
// goroutine is its only caller, but anyone may read its progress.
type msgReader struct {
	limit   int64        // bytes; larger messages are read past and dropped
	scratch []byte       // the first chunk of every message
	arrived atomic.Int64 // bytes read so far, of all messages
}

func newMsgReader(limit int64) *msgReader {
	return &msgReader{limit: limit, scratch: make([]byte, readStep)}
}

// progress is a count that grows whenever bytes of a message arrive.
func (mr *msgReader) progress() int64 { return mr.arrived.Load() }

// next reads the next message of conn whole, in a buffer of its own, or
// reads past one larger than the limit and returns a *MessageTooBigError.
func (mr *msgReader) next(ctx context.Context, conn *websocket.Conn) ([]byte, error) {
	_, r, err := conn.Reader(ctx)
	if err != nil {
		return nil, err
	}
	return mr.readAll(r)
}

// readAll reads r to its end, holding at most limit+1 bytes of it.
func (mr *msgReader) readAll(r io.Reader) ([]byte, error) {
	chunks := [][]byte{mr.scratch}
	var total int64
	for {
		chunk := chunks[len(chunks)-1]
		n, err := mr.fill(r, chunk)
		total += int64(n)
		switch {
		case err == io.EOF && total <= mr.limit:
			return assemble(chunks, n, total), nil
		case err == io.EOF:
			return nil, mr.tooBig(total)
		case err != nil:
			return nil, err
		case total > mr.limit:
			return nil, mr.readPast(r, total)
		}
		chunks = append(chunks, make([]byte, min(2*int64(len(chunk)), maxChunk, mr.limit+1-total)))
	}
}

// fill reads into chunk until it is full (nil) or r ends (io.EOF), in
// steps of at most readStep bytes, counting each.
func (mr *msgReader) fill(r io.Reader, chunk []byte) (int, error) {
	n := 0
	for n < len(chunk) {
		m, err := r.Read(chunk[n:min(len(chunk), n+readStep)])
		n += m
		mr.arrived.Add(int64(m))
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// assemble copies the chunks, the last filled to last bytes, into one
// buffer of total bytes.
func assemble(chunks [][]byte, last int, total int64) []byte {
	buf := make([]byte, 0, total)
	for _, c := range chunks[:len(chunks)-1] {
		buf = append(buf, c...)
	}
	return append(buf, chunks[len(chunks)-1][:last]...)
}

// readPast reads past the rest of a message too big to hold, of which
// read bytes are in.
func (mr *msgReader) readPast(r io.Reader, read int64) error {
	err := mr.tooBig(read) // before the scratch chunk, its start, is reused
	for {
		n, rerr := mr.fill(r, mr.scratch)
		err.Size += int64(n)
		if rerr == io.EOF {
			return err
		}
		if rerr != nil {
			return rerr
		}
	}
}

// tooBig is the error for a message of size bytes, its first ones in the
// scratch chunk.
func (mr *msgReader) tooBig(size int64) *MessageTooBigError {
	start := append([]byte(nil), mr.scratch[:min(int64(len(mr.scratch)), size, 200)]...)
	return &MessageTooBigError{Size: size, Limit: mr.limit, Start: start}
}
