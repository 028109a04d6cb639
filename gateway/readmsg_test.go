package gateway

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// readAll returns a message whole up to the limit and reads past a larger
// one; every byte it reads counts as progress.
func TestReadAllBound(t *testing.T) {
	const limit = 300 << 10 // the scratch chunk and several after it
	cases := []struct {
		name string
		size int
	}{
		{"empty", 0},
		{"one byte", 1},
		{"the scratch chunk", readStep},
		{"past the scratch chunk", readStep + 1},
		{"the limit", limit},
		{"one past the limit", limit + 1},
		{"well past the limit", 5 * limit},
	}
	readers := []struct {
		name string
		of   func([]byte) io.Reader
	}{
		{"short reads", func(b []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(b)) }},
		{"EOF with the last bytes", func(b []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(b)) }},
	}
	for _, tc := range cases {
		for _, rd := range readers {
			t.Run(tc.name+"/"+rd.name, func(t *testing.T) { checkReadAll(t, limit, tc.size, rd.of) })
		}
	}
}

func checkReadAll(t *testing.T, limit int64, size int, reader func([]byte) io.Reader) {
	msg := make([]byte, size)
	for i := range msg {
		msg[i] = byte(i % 251)
	}
	mr := newMsgReader(limit)
	got, err := mr.readAll(reader(msg))
	var tooBig *MessageTooBigError
	switch {
	case int64(size) <= limit && (err != nil || !bytes.Equal(got, msg) || cap(got) != len(got)):
		t.Errorf("readAll = %d bytes (cap %d), %v; want the %d bytes", len(got), cap(got), err, size)
	case int64(size) > limit && (!errors.As(err, &tooBig) || tooBig.Size != int64(size) ||
		tooBig.Limit != limit || !bytes.Equal(tooBig.Start, msg[:200])):
		t.Errorf("readAll = %d bytes, %v; want a MessageTooBigError of %d bytes", len(got), err, size)
	}
	if p := mr.progress(); p != int64(size) {
		t.Errorf("progress %d, want %d", p, size)
	}
}
