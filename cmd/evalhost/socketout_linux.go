package main

import (
	"errors"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// socketOutput returns out, when it is a stream socket (Node's
// child_process gives a child's stdio as one; socat's EXEC, inetd and
// systemd's Accept=yes give one socket as stdin and stdout), as a
// socketWriter; nil for anything else, or when it cannot be made.
func socketOutput(out *os.File) *socketWriter {
	rc, err := out.SyscallConn()
	if err != nil {
		return nil
	}
	dup := -1
	var st syscall.Stat_t
	_ = rc.Control(func(fd uintptr) {
		if syscall.Fstat(int(fd), &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFSOCK {
			return
		}
		if typ, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TYPE); err != nil || typ != unix.SOCK_STREAM {
			return
		}
		dup, _ = unix.FcntlInt(fd, unix.F_DUPFD_CLOEXEC, 0)
	})
	if dup < 0 {
		return nil
	}
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		unix.Close(dup)
		return nil
	}
	// Disarmed (EPOLLONESHOT, no event) until a write must wait: a socket
	// with room, or the client's reads, wake nothing.
	ev := unix.EpollEvent{Events: unix.EPOLLONESHOT, Fd: int32(dup)}
	if unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, dup, &ev) != nil || unix.SetNonblock(ep, true) != nil {
		unix.Close(ep)
		unix.Close(dup)
		return nil
	}
	epf := os.NewFile(uintptr(ep), "stdout's room") // non-blocking: in Go's poller
	eprc, err := epf.SyscallConn()
	if err != nil || epf.SetReadDeadline(time.Time{}) != nil { // outside the poller: no deadlines
		epf.Close()
		unix.Close(dup)
		return nil
	}
	s := &socketWriter{fd: dup, name: out.Name(), ep: epf, eprc: eprc, dev: st.Dev, ino: st.Ino, turn: newSendTurn()}
	if l := logSocket.Load(); l != nil && l.dev == s.dev && l.ino == s.ino {
		s.turn = l.turn // stderr's socket too: a log line goes between lines
	}
	s.waitFn, s.armFn = s.roomCame, s.arm
	return s
}

// socketWriter writes a stream socket without ever blocking in the kernel
// and without changing the flags of its open file, which other holders
// share (pollableInput's non-blocking stdin, when the socket is stdin
// too; the client's copy): each send is MSG_DONTWAIT, and MSG_NOSIGNAL (a
// closed peer is EPIPE, not SIGPIPE), and a full socket is waited for in
// Go's poller, on an epoll instance of the writer's own armed for room
// only while a write waits. So its writes take deadlines (serve's bound
// once its work must end at once; a client that stopped reading held
// serve's second signal, and mcp's SIGTERM, for ever) and Close ends one
// that waits; and a socket made non-blocking as stdin is written whole
// (os.Stdout's write failed there with EAGAIN, and the line was lost).
// stderr's writer (asLog) takes turns with stdout's when they are one
// socket; a stdout write then waits for a log line's turn, lineWait at
// most, beyond its deadline.
type socketWriter struct {
	fd       int // a duplicate of stdout or stderr; closed by Close, in its turn
	name     string
	dev, ino uint64   // the socket's
	ep       *os.File // the epoll instance
	eprc     syscall.RawConn

	turn    *sendTurn // one write at a time, and Close's end of fd
	closing atomic.Bool
	armErr  error
	waitFn  func(uintptr) bool // roomCame, made once
	armFn   func(uintptr)      // arm, made once

	// lineWait, when set (asLog), bounds each write's wait, for its turn
	// and for room, in all; stalled: one waited it in vain, and the next
	// do not wait until one is sent.
	lineWait time.Duration
	stalled  atomic.Bool
}

// Write sends all of p, waiting for room as long as its deadline lets it
// (a log line: lineWait). What a log line cut short by its wait did not
// send goes first with the socket's next write (sendTurn.owed).
func (s *socketWriter) Write(p []byte) (int, error) {
	var until time.Time
	if s.lineWait > 0 {
		until = time.Now().Add(s.lineWait)
		if !s.turn.takeBy(until, !s.stalled.Load()) {
			s.stalled.Store(true) // a reply line waited all this time
			return 0, &os.PathError{Op: "write", Path: s.name, Err: os.ErrDeadlineExceeded}
		}
	} else {
		s.turn.take()
	}
	defer s.turn.give()
	bounded := false
	if len(s.turn.owed) > 0 {
		m, err := s.send(s.turn.owed, until, &bounded)
		s.turn.owed = s.turn.owed[m:]
		if err != nil {
			return 0, err
		}
		s.turn.owed = nil
	}
	n, err := s.send(p, until, &bounded)
	if err != nil && n > 0 && s.lineWait > 0 && !s.closing.Load() &&
		(errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, syscall.EAGAIN)) {
		// A line's start is in the stream: its end must follow before
		// anything else, or the two make one line (a reply glued to a
		// log line's start was lost to the client).
		s.turn.owed = append([]byte(nil), p[n:]...)
	}
	return n, err
}

// send sends all of p, its wait for room bounded by until for a log line
// (bounded: the deadline is set); the turn is held.
func (s *socketWriter) send(p []byte, until time.Time, bounded *bool) (int, error) {
	n := 0
	for n < len(p) {
		if s.closing.Load() {
			return n, &os.PathError{Op: "write", Path: s.name, Err: os.ErrClosed}
		}
		chunk := p[n:]
		if len(chunk) > maxSend {
			chunk = chunk[:maxSend]
		}
		m, errno := sendNow(s.fd, chunk)
		switch errno {
		case 0:
			n += int(m)
			if s.lineWait > 0 {
				s.stalled.Store(false)
			}
		case syscall.EINTR:
		case syscall.EAGAIN:
			if s.lineWait > 0 && !*bounded {
				if s.stalled.Load() {
					return n, &os.PathError{Op: "write", Path: s.name, Err: errno}
				}
				*bounded = true
				_ = s.ep.SetReadDeadline(until)
			}
			if err := s.waitRoom(); err != nil {
				if s.closing.Load() {
					err = os.ErrClosed // not the poller's "use of closed file"
				}
				if s.lineWait > 0 && errors.Is(err, os.ErrDeadlineExceeded) {
					s.stalled.Store(true)
				}
				return n, &os.PathError{Op: "write", Path: s.name, Err: err}
			}
		default:
			return n, &os.PathError{Op: "write", Path: s.name, Err: errno}
		}
	}
	return n, nil
}

// maxSend is the most one send writes, as package os caps a write.
const maxSend = 1 << 30

// waitRoom arms the epoll instance for room (once) and waits in the poller
// until the socket has some, its error or hang-up comes, the deadline
// passes or Close ends the wait.
func (s *socketWriter) waitRoom() error {
	s.armErr = nil
	if err := s.eprc.Control(s.armFn); err != nil {
		return err
	}
	if s.armErr != nil {
		return s.armErr
	}
	return s.eprc.Read(s.waitFn)
}

func (s *socketWriter) arm(ep uintptr) {
	ev := unix.EpollEvent{Events: unix.EPOLLOUT | unix.EPOLLONESHOT, Fd: int32(s.fd)}
	s.armErr = unix.EpollCtl(int(ep), unix.EPOLL_CTL_MOD, s.fd, &ev)
}

// roomCame reads the armed event without waiting; false: wait again.
func (s *socketWriter) roomCame(ep uintptr) bool {
	var evs [1]unix.EpollEvent
	n, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, ep, uintptr(unsafe.Pointer(&evs[0])), 1, 0, 0, 0)
	return e == 0 && n > 0
}

// SetWriteDeadline bounds the writes' waits for room, the one waiting now
// included (serve/stall.go).
func (s *socketWriter) SetWriteDeadline(t time.Time) error {
	if s.closing.Load() {
		return os.ErrClosed
	}
	return s.ep.SetReadDeadline(t)
}

// Close ends a write that waits for room, and then closes the duplicate;
// the open file's flags are as they were. Safe to call twice, and beside a
// Write.
func (s *socketWriter) Close() error {
	if s.closing.Swap(true) {
		return nil
	}
	_ = s.ep.Close() // wakes a waiting write; the descriptor goes once it left
	logSocket.CompareAndSwap(s, nil)
	s.turn.take()
	defer s.turn.give()
	return unix.Close(s.fd)
}

// sendTurn is the turn of one socket's writers: a whole write each, so
// that where stdout and stderr are one socket a log line never lands
// inside a reply line sent in parts (its first part sent, the rest waiting
// for room). A channel, so that a log line's wait for it is bounded.
// owed, read and written by the turn's holder, is the end of a log line
// whose wait for room ended after its start was sent: the next write of
// the socket, stdout's or stderr's, sends it before its own bytes.
type sendTurn struct {
	ch   chan struct{}
	owed []byte
}

func newSendTurn() *sendTurn { return &sendTurn{ch: make(chan struct{}, 1)} }

func (t *sendTurn) take() { t.ch <- struct{}{} }
func (t *sendTurn) give() { <-t.ch }

// takeBy takes the turn by until, or at once only unless wait.
func (t *sendTurn) takeBy(until time.Time, wait bool) bool {
	select {
	case t.ch <- struct{}{}:
		return true
	default:
	}
	if !wait {
		return false
	}
	timer := time.NewTimer(time.Until(until))
	defer timer.Stop()
	select {
	case t.ch <- struct{}{}:
		return true
	case <-timer.C:
		return false
	}
}

// logSocket is stderr's writer (asLog), whose turn a writer of the same
// socket (stdout's, made after it) shares.
var logSocket atomic.Pointer[socketWriter]

// asLog makes s stderr's writer: each write waits d at most, for its turn
// and for room (socketStderr).
func (s *socketWriter) asLog(d time.Duration) {
	s.lineWait = d
	logSocket.Store(s)
}
