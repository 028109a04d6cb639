package sentinput

import (
	"errors"
	"io"
	"math"
	"os"
	"sync/atomic"
	"syscall"
	"time"
)

// conn is an input whose descriptor can be read without waiting: an
// *os.File, internal/rawio's File, a net.Conn.
type conn interface {
	io.Reader
	SetReadDeadline(time.Time) error
	SyscallConn() (syscall.RawConn, error)
}

// Input is a reader whose Read can be made to end at what was sent
// (ReadSent).
type Input struct {
	r    io.Reader
	c    conn // nil: ReadSent cannot
	rc   syscall.RawConn
	sent atomic.Bool
	// left is what Read may still take after ReadSent: the bytes the
	// descriptor held then (math.MaxInt64 where that cannot be asked).
	left atomic.Int64
}

// New wraps r; see the package doc for which readers ReadSent can end.
func New(r io.Reader) *Input {
	in := &Input{r: r}
	c, ok := r.(conn)
	if !ok {
		return in
	}
	rc, err := c.SyscallConn()
	// One outside the poller takes no deadline (nothing could wake it),
	// and a blocking one would wait in a read.
	if err != nil || c.SetReadDeadline(time.Time{}) != nil || !nonblocking(rc) {
		return in
	}
	in.c, in.rc = c, rc
	return in
}

// Read reads r, or after ReadSent what was there then, then io.EOF.
func (in *Input) Read(p []byte) (int, error) {
	if !in.sent.Load() {
		n, err := in.r.Read(p)
		if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) || !in.sent.Load() {
			return n, err
		}
		// ReadSent's deadline woke it: what is there is read below.
	}
	left := in.left.Load()
	if len(p) == 0 {
		return 0, nil
	}
	if left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := readNow(in.rc, p)
	in.left.Add(int64(-n))
	if n == 0 && err == nil {
		return 0, io.EOF
	}
	return n, err
}

// ReadSent makes Read end at what was sent (see the package doc); false
// when the input cannot.
func (in *Input) ReadSent() bool {
	if in.c == nil {
		return false
	}
	left := int64(math.MaxInt64)
	_ = in.rc.Control(func(fd uintptr) {
		if n, ok := pending(fd); ok {
			left = int64(n)
		}
	})
	in.left.Store(left)
	// The flag before the deadline: a Read the deadline wakes finds it.
	in.sent.Store(true)
	_ = in.c.SetReadDeadline(time.Unix(1, 0)) // it took one in New
	return true
}
