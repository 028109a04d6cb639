package tcpowner

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"
	"syscall"
	"testing"
)

func addrOf(a net.Addr) netip.AddrPort { return a.(*net.TCPAddr).AddrPort() }

// server listens, and accepts, on a thread of its own whose fsuid is a
// given uid, as another user's server would: a socket's owner is the
// fsuid of the thread that made it, an accepted connection's that of the
// thread that accepted it. The thread is never handed back, so its fsuid
// dies with it.
type server struct {
	addr     netip.AddrPort
	accept   chan struct{}
	accepted chan error
}

func serveAs(t *testing.T, network, addr string, uid int) *server {
	t.Helper()
	s := &server{accept: make(chan struct{}), accepted: make(chan error)}
	ready := make(chan error)
	go func() {
		runtime.LockOSThread() // not unlocked: the thread ends with this goroutine
		if uid != os.Geteuid() {
			_ = syscall.Setfsuid(uid)
			if got := fsuid(); got != uid {
				ready <- fmt.Errorf("fsuid is %d after setfsuid(%d)", got, uid)
				return
			}
		}
		l, err := net.Listen(network, addr)
		if err != nil {
			ready <- err
			return
		}
		var conns []net.Conn
		defer func() {
			l.Close()
			for _, c := range conns {
				c.Close()
			}
		}()
		s.addr = addrOf(l.Addr())
		ready <- nil
		for range s.accept {
			c, err := l.Accept()
			if err == nil {
				conns = append(conns, c)
			}
			s.accepted <- err
		}
	}()
	if err := <-ready; err != nil {
		t.Skipf("cannot listen on %s %s as uid %d: %v", network, addr, uid, err)
	}
	t.Cleanup(func() { close(s.accept) })
	return s
}

func (s *server) acceptOne(t *testing.T) {
	t.Helper()
	s.accept <- struct{}{}
	if err := <-s.accepted; err != nil {
		t.Fatal(err)
	}
}

// fsuid is the calling thread's: setfsuid(-1) changes nothing and returns it.
func fsuid() int {
	r, _, _ := syscall.RawSyscall(syscall.SYS_SETFSUID, ^uintptr(0), 0, 0)
	return int(r)
}

func TestPeer(t *testing.T) {
	const other = 54321 // a uid no test runs as
	tests := []struct {
		name     string
		network  string
		listen   string
		uid      int
		accepted bool
	}{
		{"own listener, not accepted yet", "tcp4", "127.0.0.1:0", os.Geteuid(), false},
		{"own listener, accepted", "tcp4", "127.0.0.1:0", os.Geteuid(), true},
		{"own dual-stack listener", "tcp", "[::]:0", os.Geteuid(), true},
		{"another user's listener, not accepted yet", "tcp4", "127.0.0.1:0", other, false},
		{"another user's listener, accepted", "tcp4", "127.0.0.1:0", other, true},
		{"another user's wildcard listener", "tcp4", "0.0.0.0:0", other, true},
		{"another user's dual-stack listener", "tcp", "[::]:0", other, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.uid != os.Geteuid() && os.Geteuid() != 0 {
				t.Skip("needs root to make a socket of another uid")
			}
			s := serveAs(t, tc.network, tc.listen, tc.uid)
			c, err := net.Dial("tcp4", netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), s.addr.Port()).String())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if tc.accepted {
				s.acceptOne(t)
			}
			got, err := Peer(addrOf(c.LocalAddr()), addrOf(c.RemoteAddr()))
			if err != nil {
				t.Fatal(err)
			}
			if got.UID != uint32(tc.uid) || got.Local != addrOf(c.RemoteAddr()) || got.Remote != addrOf(c.LocalAddr()) {
				t.Errorf("peer = %+v; want uid %d at %v connected to %v", got, tc.uid, c.RemoteAddr(), c.LocalAddr())
			}
			if tc.accepted && got.Inode == 0 {
				t.Errorf("peer = %+v: an accepted connection has an inode", got)
			}
		})
	}
}

func TestPeerMissing(t *testing.T) {
	// Nothing connects port 1 to port 2 here.
	_, err := Peer(netip.MustParseAddrPort("127.0.0.1:1"), netip.MustParseAddrPort("127.0.0.1:2"))
	if !errors.Is(err, ErrNoPeer) {
		t.Fatalf("err = %v, want ErrNoPeer", err)
	}
}

func TestListening(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	c, err := net.Dial("tcp4", l.Addr().String()) // a connection is not a listener
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, err := Listening(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	var found int
	for _, s := range got {
		if s.State != Listen {
			t.Errorf("%+v is not listening", s)
		}
		if s.Local == addrOf(l.Addr()) {
			found++
			if s.UID != uint32(os.Geteuid()) || s.Inode == 0 {
				t.Errorf("our listener = %+v; want our uid and an inode", s)
			}
		}
	}
	if found != 1 {
		t.Errorf("Listening(self) = %+v; want our listener %v once", got, l.Addr())
	}
	if _, err := Listening(1 << 30); err == nil {
		t.Errorf("Listening of a pid that cannot exist succeeded")
	}
}
