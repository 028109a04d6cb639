package host

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The order of fd 1 and fd 2. Two pipes carry no order between them, and
// raw writes (os.write, a child's echo, C code) get no marks. One reader
// per pipe put a write to fd 2 before the write to fd 1 made just before it
// whenever both pipes were ready when the runtime's poller looked (it runs
// the goroutine it readied last first; with two Ps the readers race), and
// a line written to stderr after a large write to stdout came out in the
// middle of it, while the stdout reader was still reading.
//
// So on Linux one goroutine reads both, in the order their pipes became
// readable: an epoll instance of their own (itself in Go's poller; edge
// triggered) links a pipe on its ready list when a write wakes it, and
// reports the pipes in the order they were linked. A pipe is linked by
// its first write since the reader last looked (harvest); the reader
// looks right before each read, so a pipe it empties is linked again by a
// later write. A pipe that holds bytes stays ahead of one linked later
// (todo), but only for what it held when that one was found (FIONREAD):
// the rest may be younger than the other's first byte, and the other has
// its turn.
//
// What that keeps, and what not, is in doc.go ("Order of stdout and
// stderr").

// orderedReader reads fd 1 and fd 2 in the order their pipes became readable.
type orderedReader struct {
	p *Process
	// The epoll instance, polled by Go's runtime. Only run closes it, as
	// it ends, so its number, which the calls name, is never another
	// file's; waitChild wakes run with a deadline instead.
	ep   *os.File
	epfd int
	s    [3]*rawStream
	rc   [3]syscall.RawConn
	open [3]bool

	// todo holds the fds with bytes to read, the one whose first unread
	// byte is oldest first; budget bounds the head's reads while another
	// waits (-1: none).
	todo   []int
	budget [3]int
	hup    [3]bool // its writers are gone: it is read until its end, which no edge announces again
	evs    [2]unix.EpollEvent
	avail  int32 // FIONREAD's answer

	// The calls' callbacks and state, made once: a closure per read was
	// garbage per cell.
	epRC           syscall.RawConn
	waitFn, readFn func(uintptr) bool
	rbuf           []byte
	rn             int
	rerr           error
	rst            *rawState
	emptied        bool // the read left the pipe empty
}

// startRawReaders starts the readers of fd 1 and fd 2: one ordered reader
// for both, or readRaw for fd 1 alone (merged) or where epoll fails.
func (p *Process) startRawReaders() {
	if p.errR == nil {
		p.wg.Add(1)
		go p.readRaw(1, p.outR)
		return
	}
	o, err := p.newOrderedReader()
	if err != nil {
		// Unordered, as on other systems: each pipe's reader on its own.
		p.wg.Add(2)
		go p.readRaw(1, p.outR)
		go p.readRaw(2, p.errR)
		return
	}
	p.wakeRaw = func() { _ = o.ep.SetReadDeadline(time.Unix(1, 0)) }
	p.wg.Add(1)
	go o.run()
}

func (p *Process) newOrderedReader() (*orderedReader, error) {
	o := &orderedReader{p: p, todo: make([]int, 0, 2), budget: [3]int{-1, -1, -1}}
	for fd, f := range [3]*os.File{1: p.outR, 2: p.errR} {
		if f == nil {
			continue
		}
		rc, err := f.SyscallConn()
		if err != nil {
			return nil, fmt.Errorf("fd %d: %w", fd, err)
		}
		o.rc[fd], o.s[fd], o.open[fd] = rc, p.newRawStream(fd), true
	}
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("epoll_create1: %w", err)
	}
	// Non-blocking, so os.NewFile puts it in Go's poller.
	if err := unix.SetNonblock(epfd, true); err != nil {
		unix.Close(epfd)
		return nil, fmt.Errorf("epoll: %w", err)
	}
	o.ep, o.epfd = os.NewFile(uintptr(epfd), "fd 1 and 2 readiness"), epfd
	if o.epRC, err = o.ep.SyscallConn(); err != nil {
		o.ep.Close()
		return nil, fmt.Errorf("epoll: %w", err)
	}
	o.waitFn = func(uintptr) bool { return o.harvest() > 0 }
	o.readFn = o.read
	for fd := 1; fd <= 2; fd++ {
		var e syscall.Errno
		err := o.rc[fd].Control(func(pipe uintptr) {
			ev := unix.EpollEvent{Events: unix.EPOLLIN | unix.EPOLLET, Fd: int32(fd)}
			_, _, e = unix.RawSyscall6(unix.SYS_EPOLL_CTL, uintptr(epfd), unix.EPOLL_CTL_ADD, pipe,
				uintptr(unsafe.Pointer(&ev)), 0, 0)
		})
		if err == nil && e != 0 {
			err = fmt.Errorf("epoll_ctl fd %d: %w", fd, e)
		}
		if err != nil {
			o.ep.Close()
			return nil, err
		}
	}
	return o, nil
}

// run reads until both pipes have ended or waitChild, which closed them,
// wakes it.
func (o *orderedReader) run() {
	defer o.p.wg.Done()
	defer o.ep.Close()
	for o.open[1] || o.open[2] {
		looked := false
		if len(o.todo) == 0 {
			if !o.wait() {
				break
			}
			looked = true
		}
		if len(o.todo) == 0 {
			continue
		}
		fd := o.todo[0]
		s := o.s[fd]
		looked = looked && s.buf != nil // taking a chunk may wait
		buf := s.buffer()
		if !looked {
			// The writes that come between this look and the read are
			// read by it: a link they made would put the pipe ahead of
			// the other's later writes once it is empty.
			o.harvest()
			if len(o.todo) == 0 || o.todo[0] != fd {
				continue // found empty (bound)
			}
		}
		o.readHead(fd, buf)
	}
	for fd := 1; fd <= 2; fd++ {
		if o.open[fd] {
			o.open[fd] = false
			o.s[fd].end()
		}
	}
}

// wait parks in Go's poller until a pipe is reported ready; false once
// waitChild has closed the pipes.
func (o *orderedReader) wait() bool {
	return o.epRC.Read(o.waitFn) == nil
}

// harvest takes the pipes reported ready, in the order they became so, onto
// todo. One that joins behind another bounds the head's reads to what it
// holds now: the bytes written before the newcomer's first.
func (o *orderedReader) harvest() int {
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(o.epfd), uintptr(unsafe.Pointer(&o.evs[0])),
		uintptr(len(o.evs)), 0, 0, 0)
	if e != 0 {
		return 0
	}
	for _, ev := range o.evs[:n] {
		fd := int(ev.Fd)
		if fd < 1 || fd > 2 || !o.open[fd] {
			continue
		}
		o.hup[fd] = o.hup[fd] || ev.Events&(unix.EPOLLHUP|unix.EPOLLERR) != 0
		if slices.Contains(o.todo, fd) {
			continue
		}
		o.todo = append(o.todo, fd)
		o.bound()
	}
	return int(n)
}

// bound gives the head of todo its budget while another waits behind it:
// what its pipe holds now. A head found empty leaves todo, unless its
// end is still to be read.
func (o *orderedReader) bound() {
	if len(o.todo) < 2 || o.budget[o.todo[0]] >= 0 {
		return
	}
	head := o.todo[0]
	n := -1
	if err := o.rc[head].Control(func(pipe uintptr) { n = o.unread(pipe) }); err != nil || n < 0 {
		return // closed under us: the next read of it says so
	}
	switch {
	case n > 0:
		o.budget[head] = n
	case !o.hup[head]:
		o.drop(head)
	}
}

// unread is how many bytes pipe holds (FIONREAD, which is TIOCINQ), -1 if
// it cannot say.
func (o *orderedReader) unread(pipe uintptr) int {
	_, _, e := unix.RawSyscall(unix.SYS_IOCTL, pipe, unix.TIOCINQ, uintptr(unsafe.Pointer(&o.avail)))
	if e != 0 {
		return -1
	}
	return int(o.avail)
}

// read is readHead's call: one read of the pipe, and whether it left the
// pipe empty (a short read; a full one asks the pipe), as it was then:
// asked later, after the read was handed on, a cell may have written more.
func (o *orderedReader) read(pipe uintptr) bool {
	o.rst.busy.Store(true)
	for {
		o.rn, o.rerr = syscall.Read(int(pipe), o.rbuf)
		if o.rerr != syscall.EINTR {
			break
		}
	}
	switch {
	case o.rerr == syscall.EAGAIN:
		o.emptied = true
	case o.rerr != nil || o.rn == 0:
		o.emptied = false
	case o.rn < len(o.rbuf):
		o.emptied = true
	default:
		o.emptied = o.unread(pipe) == 0
	}
	return true
}

// readHead reads fd, the head of todo, into buf once, within its budget,
// and hands the read on. A pipe left empty leaves todo, unless its end is
// still to be read; one whose budget is spent goes behind the other.
func (o *orderedReader) readHead(fd int, buf []byte) {
	s := o.s[fd]
	if b := o.budget[fd]; b >= 0 && b < len(buf) {
		buf = buf[:b]
	}
	o.rbuf, o.rst, o.emptied = buf, &o.p.raw[fd], false
	err := o.rc[fd].Read(o.readFn)
	n := o.rn
	if err == nil {
		err = o.rerr
	}
	o.rbuf = nil
	switch {
	case errors.Is(err, syscall.EAGAIN):
		o.p.handedOn(fd)
	case err != nil || n == 0:
		o.open[fd] = false
		o.emptied = true
		s.end()
	default:
		s.got(n)
		o.p.handedOn(fd)
		if o.budget[fd] >= 0 && !o.emptied {
			if o.budget[fd] -= n; o.budget[fd] == 0 {
				// The rest is younger than the other's first byte.
				o.budget[fd] = -1
				if len(o.todo) == 2 {
					o.todo[0], o.todo[1] = o.todo[1], o.todo[0]
					o.bound()
				}
			}
		}
	}
	if o.emptied && (!o.hup[fd] || !o.open[fd]) {
		o.drop(fd)
	}
}

// drop takes fd off todo: its pipe was left empty, or ended.
func (o *orderedReader) drop(fd int) {
	o.todo = slices.DeleteFunc(o.todo, func(x int) bool { return x == fd })
	o.budget[fd] = -1
}
