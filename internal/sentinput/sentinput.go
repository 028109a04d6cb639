package sentinput

import (
	"errors"
	"io"
	"os"
	"sync/atomic"
	"time"
)

// nowReader is an input that can be woken and read without waiting.
type nowReader interface {
	io.Reader
	SetReadDeadline(time.Time) error
	// ReadNow reads what is there without waiting, past a deadline too:
	// 0 and nil when nothing is.
	ReadNow(p []byte) (int, error)
}

// Input is a reader whose Read can be made to end at what was sent
// (ReadSent).
type Input struct {
	r    io.Reader
	now  nowReader // nil: ReadSent cannot
	sent atomic.Bool
}

// New wraps r: an *os.File in Go's poller (non-blocking) or a reader with
// ReadNow and SetReadDeadline (internal/rawio's File) can be read up to
// what was sent; any other reader is read as it is.
func New(r io.Reader) *Input {
	in := &Input{r: r}
	switch v := r.(type) {
	case nowReader:
		in.now = v
	case *os.File:
		in.now = fileNow(v)
	}
	// One outside the poller takes no deadline: nothing could wake it.
	if in.now != nil && in.now.SetReadDeadline(time.Time{}) != nil {
		in.now = nil
	}
	return in
}

// Read reads r, or after ReadSent what is there now, then io.EOF.
func (in *Input) Read(p []byte) (int, error) {
	if !in.sent.Load() {
		n, err := in.r.Read(p)
		if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) || !in.sent.Load() {
			return n, err
		}
		// ReadSent's deadline woke it: what is there is read below.
	}
	if len(p) == 0 {
		return 0, nil
	}
	n, err := in.now.ReadNow(p)
	if n == 0 && err == nil {
		return 0, io.EOF
	}
	return n, err
}

// ReadSent makes Read end at what was sent (see the package doc); false
// when the input cannot.
func (in *Input) ReadSent() bool {
	if in.now == nil {
		return false
	}
	// The flag before the deadline: a Read the deadline wakes finds it.
	in.sent.Store(true)
	_ = in.now.SetReadDeadline(time.Unix(1, 0)) // it took one in New
	return true
}
