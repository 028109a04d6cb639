package tcpowner

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
)

// Errors callers branch on.
var (
	// ErrUnsupported: this system has no way to tell (only Linux has).
	ErrUnsupported = errors.New("telling who holds a TCP socket is supported on Linux only")
	// ErrNoPeer: no live socket is the other end of the connection.
	ErrNoPeer = errors.New("no socket on this machine is the other end of the connection")
)

// State is a socket's TCP state as the kernel numbers it.
type State uint8

// The states callers meet; the kernel has others.
const (
	Established State = 0x01
	SynRecv     State = 0x03
	TimeWait    State = 0x06
	Listen      State = 0x0A
)

// Socket is one TCP socket as the kernel shows it: a line of
// /proc/net/tcp or tcp6, or a sock_diag answer.
type Socket struct {
	Local, Remote netip.AddrPort // IPv4-mapped IPv6 addresses are unmapped
	State         State
	UID           uint32 // its maker's (an accepted connection's acceptor's); a listener's for a connection it has not accepted
	Inode         uint64 // 0 until a connection is accepted, and for TIME_WAIT
}

// Parse reads a whole /proc/net/tcp or /proc/net/tcp6 table: a header
// line, then one socket a line. A line it cannot read is an error, not
// skipped: a caller deciding whom to trust must not decide on part of it.
func Parse(table []byte) ([]Socket, error) {
	var out []Socket
	for n, line := range bytes.Split(table, []byte("\n")) {
		if n == 0 && bytes.Contains(line, []byte("local_address")) {
			continue
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		s, err := parseLine(line)
		if err != nil {
			return nil, fmt.Errorf("tcp table line %d: %w", n+1, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// parseLine reads "sl: local remote st tx:rx tr:when retrnsmt uid timeout inode ...".
func parseLine(line []byte) (Socket, error) {
	var s Socket
	f := bytes.Fields(line)
	if len(f) < 10 || !bytes.HasSuffix(f[0], []byte(":")) {
		return s, fmt.Errorf("%d fields in %.120q, want at least 10 starting with the slot", len(f), line)
	}
	var err error
	if s.Local, err = parseAddr(f[1]); err != nil {
		return s, fmt.Errorf("local address: %w", err)
	}
	if s.Remote, err = parseAddr(f[2]); err != nil {
		return s, fmt.Errorf("remote address: %w", err)
	}
	st, err := strconv.ParseUint(string(f[3]), 16, 8)
	if err != nil || len(f[3]) != 2 {
		return s, fmt.Errorf("state %q is not two hex digits", f[3])
	}
	s.State = State(st)
	uid, err := strconv.ParseUint(string(f[7]), 10, 32)
	if err != nil {
		return s, fmt.Errorf("uid %q: %w", f[7], err)
	}
	s.UID = uint32(uid)
	if s.Inode, err = strconv.ParseUint(string(f[9]), 10, 64); err != nil {
		return s, fmt.Errorf("inode %q: %w", f[9], err)
	}
	return s, nil
}

// parseAddr reads "0100007F:1F90" (IPv4) or 32 hex digits and a port
// (IPv6). The kernel prints each 32-bit word of the address as the number
// its bytes make in this machine's byte order, and the port as a number.
func parseAddr(b []byte) (netip.AddrPort, error) {
	host, port, ok := bytes.Cut(b, []byte(":"))
	if !ok || len(port) != 4 || (len(host) != 8 && len(host) != 32) {
		return netip.AddrPort{}, fmt.Errorf("%q is not HEX:PORT with 8 or 32 hex digits and a 4-digit port", b)
	}
	p, err := strconv.ParseUint(string(port), 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("port %q: %w", port, err)
	}
	raw := make([]byte, len(host)/2)
	if _, err := hex.Decode(raw, host); err != nil {
		return netip.AddrPort{}, fmt.Errorf("address %q: %w", host, err)
	}
	var ip [16]byte
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(ip[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	var a netip.Addr
	if len(raw) == 4 {
		a = netip.AddrFrom4([4]byte(ip[:4]))
	} else {
		a = netip.AddrFrom16(ip).Unmap()
	}
	return netip.AddrPortFrom(a, uint16(p)), nil
}
