package tcpowner

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Netlink sock_diag (linux/sock_diag.h, linux/inet_diag.h) asks the kernel
// for one socket by its 4-tuple, a hash lookup, where the /proc tables
// print every socket of the namespace as text. x/sys/unix has the
// constants but not the structs, so the few bytes are laid out here.
const (
	sizeofDiagReq = 56 // struct inet_diag_req_v2
	sizeofDiagMsg = 72 // struct inet_diag_msg
	noCookie      = ^uint32(0)

	// allButTimeWait is an idiag_states mask: a bit for each state (1<<state).
	allButTimeWait = 0xfff &^ (1 << TimeWait)
)

// errAskTables: sock_diag gave no answer to trust, and the tables are the
// reference: the kernel refused the request (a seccomp filter or an LSM),
// lacks inet_diag, or shows no uid for the socket.
var errAskTables = errors.New("sock_diag does not tell")

// openDiag opens a sock_diag socket. A variable so that a test can refuse
// it as a seccomp filter would.
var openDiag = func() (int, error) {
	return unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
}

var diagSeq atomic.Uint32

// diagPeer asks for the socket at src connected to dst: found is false
// when there is no live one. An error wraps errAskTables.
func diagPeer(src, dst netip.AddrPort) (s Socket, found bool, err error) {
	family := uint8(unix.AF_INET6)
	if src.Addr().Is4() && dst.Addr().Is4() {
		family = unix.AF_INET
	}
	err = ask(diagRequest(family, allButTimeWait, false, src, dst), func(got Socket) { s, found = got, true })
	if errors.Is(err, unix.ENOENT) {
		// No such socket, or no inet_diag in this kernel: the probe tells.
		if !diagAnswers() {
			return Socket{}, false, fmt.Errorf("%w: this kernel's sock_diag has no TCP", errAskTables)
		}
		return Socket{}, false, nil
	}
	if err != nil {
		return Socket{}, false, fmt.Errorf("%w: %w", errAskTables, err)
	}
	switch {
	case s.Local != src || s.Remote != dst:
		// A lookup that misses the connections answers with the listener
		// the tuple would reach; that is not the other end.
		return Socket{}, false, nil
	case s.State == TimeWait:
		return Socket{}, false, nil
	case s.State == SynRecv:
		// A request socket: sock_diag shows uid 0 for it, /proc its listener's.
		return Socket{}, false, fmt.Errorf("%w: no uid for a connection the server has not completed", errAskTables)
	}
	return s, true, nil
}

// diagListeners dumps this namespace's listening TCP sockets, both families.
func diagListeners() ([]Socket, error) {
	var all []Socket
	for _, family := range []uint8{unix.AF_INET, unix.AF_INET6} {
		err := ask(diagRequest(family, 1<<Listen, true, netip.AddrPort{}, netip.AddrPort{}), func(s Socket) { all = append(all, s) })
		if err != nil {
			return nil, fmt.Errorf("%w: %w", errAskTables, err)
		}
	}
	return all, nil
}

// diagAnswers reports whether this kernel's sock_diag serves TCP: a dump
// of no states is an empty answer there, ENOENT where inet_diag is absent.
var diagAnswers = sync.OnceValue(func() bool {
	return ask(diagRequest(unix.AF_INET, 0, true, netip.AddrPort{}, netip.AddrPort{}), func(Socket) {}) == nil
})

// diagRequest is a SOCK_DIAG_BY_FAMILY message for TCP: one socket by
// its tuple, or (dump) every socket in states.
func diagRequest(family uint8, states uint32, dump bool, src, dst netip.AddrPort) []byte {
	b := make([]byte, unix.SizeofNlMsghdr+sizeofDiagReq)
	ne := binary.NativeEndian
	flags := uint16(unix.NLM_F_REQUEST)
	if dump {
		flags |= unix.NLM_F_DUMP
	}
	ne.PutUint32(b[0:], uint32(len(b)))
	ne.PutUint16(b[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(b[6:], flags)
	ne.PutUint32(b[8:], diagSeq.Add(1))
	r := b[unix.SizeofNlMsghdr:]
	r[0], r[1] = family, unix.IPPROTO_TCP
	ne.PutUint32(r[4:], states)
	id := r[8:]
	binary.BigEndian.PutUint16(id[0:], src.Port())
	binary.BigEndian.PutUint16(id[2:], dst.Port())
	if src.IsValid() {
		putAddr(id[4:20], family, src.Addr())
		putAddr(id[20:36], family, dst.Addr())
	}
	ne.PutUint32(id[40:], noCookie)
	ne.PutUint32(id[44:], noCookie)
	return b
}

// putAddr writes a in the family's layout: IPv4 in the first 4 bytes,
// IPv6 (an IPv4 address v4-mapped) in all 16.
func putAddr(dst []byte, family uint8, a netip.Addr) {
	if family == unix.AF_INET {
		v4 := a.As4()
		copy(dst, v4[:])
		return
	}
	v6 := a.As16()
	copy(dst, v6[:])
}

// ask sends req on a socket of its own and hands each socket of the answer
// to each: one for an exact request, any number for a dump. A socket per
// request keeps callers apart and follows the caller's network namespace.
func ask(req []byte, each func(Socket)) error {
	fd, err := openDiag()
	if err != nil {
		return fmt.Errorf("open a sock_diag socket: %w", err)
	}
	defer unix.Close(fd)
	// The kernel answers within the send; the timeout only bounds a wait
	// for an answer that is lost.
	tv := unix.Timeval{Sec: 5}
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return fmt.Errorf("sock_diag receive timeout: %w", err)
	}
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("send to sock_diag: %w", err)
	}
	dump := binary.NativeEndian.Uint16(req[6:])&unix.NLM_F_DUMP == unix.NLM_F_DUMP
	seq := binary.NativeEndian.Uint32(req[8:])
	buf := make([]byte, 32<<10) // a dump's parts are at most 32 KiB
	for {
		n, _, rflags, _, err := unix.Recvmsg(fd, buf, nil, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("receive from sock_diag: %w", err)
		}
		if rflags&unix.MSG_TRUNC != 0 {
			return errors.New("sock_diag's answer is longer than the buffer")
		}
		done, err := readAnswer(buf[:n], seq, each)
		if err != nil || done || !dump {
			return err
		}
	}
}

// readAnswer reads one datagram of netlink messages; done is the end of a dump.
func readAnswer(b []byte, seq uint32, each func(Socket)) (done bool, err error) {
	ne := binary.NativeEndian
	for len(b) >= unix.SizeofNlMsghdr {
		l := int(ne.Uint32(b))
		if l < unix.SizeofNlMsghdr || l > len(b) {
			return false, fmt.Errorf("sock_diag message of %d bytes in %d", l, len(b))
		}
		typ, flags, data := ne.Uint16(b[4:]), ne.Uint16(b[6:]), b[unix.SizeofNlMsghdr:l]
		if ne.Uint32(b[8:]) != seq {
			return false, fmt.Errorf("sock_diag answered request %d, not %d", ne.Uint32(b[8:]), seq)
		}
		if flags&unix.NLM_F_DUMP_INTR != 0 {
			return false, errors.New("sock_diag's dump was interrupted")
		}
		switch typ {
		case unix.NLMSG_ERROR, unix.NLMSG_DONE:
			if len(data) < 4 {
				return false, fmt.Errorf("sock_diag status message of %d bytes", len(data))
			}
			if e := int32(ne.Uint32(data)); e < 0 {
				return false, unix.Errno(-e)
			}
			return true, nil
		case unix.SOCK_DIAG_BY_FAMILY:
			s, err := parseDiagMsg(data)
			if err != nil {
				return false, err
			}
			each(s)
		}
		b = b[min((l+3)&^3, len(b)):]
	}
	return false, nil
}

// parseDiagMsg reads a struct inet_diag_msg (the attributes after it are not asked for).
func parseDiagMsg(m []byte) (Socket, error) {
	if len(m) < sizeofDiagMsg {
		return Socket{}, fmt.Errorf("sock_diag socket of %d bytes, want %d", len(m), sizeofDiagMsg)
	}
	id := m[4:52]
	addr := func(b []byte) netip.Addr {
		if m[0] == unix.AF_INET {
			return netip.AddrFrom4([4]byte(b[:4]))
		}
		return netip.AddrFrom16([16]byte(b[:16])).Unmap()
	}
	if m[0] != unix.AF_INET && m[0] != unix.AF_INET6 {
		return Socket{}, fmt.Errorf("sock_diag socket of family %d", m[0])
	}
	return Socket{
		Local:  netip.AddrPortFrom(addr(id[4:20]), binary.BigEndian.Uint16(id[0:])),
		Remote: netip.AddrPortFrom(addr(id[20:36]), binary.BigEndian.Uint16(id[2:])),
		State:  State(m[1]),
		UID:    binary.NativeEndian.Uint32(m[64:]),
		Inode:  uint64(binary.NativeEndian.Uint32(m[68:])),
	}, nil
}
