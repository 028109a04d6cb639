package shared

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"time"

	"github.com/evalhost/evalhost/internal/tcpowner"
)

// On Linux, /proc tells whose a socket is (package tcpowner), and evalhost
// talks to a shared gateway only through a listener that is this user's:
// the gateway picks its own port, is trusted only while its pid holds that
// port, and every connection is checked before anything is sent on it.

var loopback4 = netip.MustParseAddr("127.0.0.1")

// gatewayPort is the port a new gateway is told to bind: 0, the kernel's
// choice, made in the gateway's own bind. A port chosen here, closed and
// passed on in argv (which ps shows) could be taken by another user in the
// seconds the gateway takes to start.
func gatewayPort() (int, error) { return 0, nil }

// listeningPort waits until the gateway pid listens on 127.0.0.1 and
// returns that port: the socket is the process's own, so nothing else can
// answer there while it holds it.
func listeningPort(ctx context.Context, pid, _ int) (int, error) {
	for delay := 20 * time.Millisecond; ; delay = min(delay*2, 250*time.Millisecond) {
		port, err := ownListener(pid)
		switch {
		case !pidAlive(pid):
			return 0, fmt.Errorf("the gateway process exited before it listened")
		case err != nil:
			// Our own live child's sockets are always readable: /proc
			// itself is missing or unreadable, which waiting will not cure.
			return 0, fmt.Errorf("cannot tell which port it listens on: %w", err)
		case port > 0:
			return port, nil
		}
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("%w (it listened on no port of 127.0.0.1)", ctx.Err())
		case <-time.After(delay):
		}
	}
}

// ownListener is the port on 127.0.0.1 that pid listens on with a socket
// of this user's, 0 when none yet.
func ownListener(pid int) (int, error) {
	self, err := selfUID()
	if err != nil {
		return 0, err
	}
	socks, err := tcpowner.Listening(pid)
	if err != nil {
		return 0, err
	}
	var ports []uint16
	for _, s := range socks {
		if s.Local.Addr() == loopback4 && int(s.UID) == self {
			ports = append(ports, s.Local.Port())
		}
	}
	switch len(ports) {
	case 0:
		return 0, nil
	case 1:
		return int(ports[0]), nil
	}
	return 0, fmt.Errorf("pid %d listens on several ports of 127.0.0.1 (%v), not one", pid, ports)
}

// holdsPort reports whether pid holds a listener of this user's on
// 127.0.0.1:port. While it does, no one else can listen there (another
// user cannot share the port, and a connection to 127.0.0.1 prefers the
// exact address to a wildcard).
func holdsPort(pid int, port string, _ []string) bool {
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return false
	}
	self, err := selfUID()
	if err != nil {
		return false
	}
	socks, err := tcpowner.Listening(pid)
	if err != nil {
		return false
	}
	want := netip.AddrPortFrom(loopback4, uint16(p))
	for _, s := range socks {
		if s.Local == want && int(s.UID) == self {
			return true
		}
	}
	return false
}

// verifyConn refuses a connection to a shared gateway whose other end is
// not this user's, before anything is written on it. It guards every
// connection, not just the first: a gateway that ends frees its port for
// anyone, and a kernel's next request (a reconnect, an interrupt, a
// delete) would carry the token there.
func verifyConn(c net.Conn) error {
	local, lok := c.LocalAddr().(*net.TCPAddr)
	remote, rok := c.RemoteAddr().(*net.TCPAddr)
	if !lok || !rok {
		return fmt.Errorf("refused the shared gateway's connection %v: not TCP, so whose it is cannot be told", c.RemoteAddr())
	}
	self, err := selfUID()
	if err != nil {
		return fmt.Errorf("refused the shared gateway's address %v, so nothing was sent to it: %w", remote, err)
	}
	peer, err := tcpowner.Peer(local.AddrPort(), remote.AddrPort())
	if err != nil {
		return fmt.Errorf("refused the shared gateway's address %v: whose process listens there cannot be told, so nothing was sent to it "+
			"(use the runner backend, or a gateway of your own with PI_PYTHON_GATEWAY_URL): %w", remote, err)
	}
	if int(peer.UID) != self {
		return &ForeignListenerError{Addr: remote.String(), UID: peer.UID, Self: self}
	}
	return nil
}

// selfUID is the uid whose sockets are this user's. In a user namespace
// that does not map the user, the effective uid is the overflow uid, which
// /proc also shows for every other unmapped user's socket: there whose a
// socket is cannot be told, and nothing is trusted.
func selfUID() (int, error) {
	self := os.Geteuid()
	if self == tcpowner.OverflowUID() {
		return 0, fmt.Errorf("evalhost runs as the overflow uid %d (a user namespace that does not map your user), "+
			"where another user's sockets look like yours; use the runner backend, or a gateway of your own with PI_PYTHON_GATEWAY_URL", self)
	}
	return self, nil
}
