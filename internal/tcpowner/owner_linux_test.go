package tcpowner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
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

func serveAs(t *testing.T, network, addr string, uid int, opt func(fd int) error) *server {
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
		lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
			if opt == nil {
				return nil
			}
			var err error
			if cerr := c.Control(func(fd uintptr) { err = opt(int(fd)) }); cerr != nil {
				return cerr
			}
			return err
		}}
		l, err := lc.Listen(context.Background(), network, addr)
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

// paths runs test through sock_diag and again through the tables, as
// where sock_diag is refused (a seccomp filter's EPERM). reads counts the
// lookups that read the tables.
func paths(t *testing.T, test func(t *testing.T, diag bool, reads func() int64)) {
	for _, p := range []struct {
		name string
		diag bool
	}{{"sock_diag", true}, {"tables", false}} {
		t.Run(p.name, func(t *testing.T) {
			var n atomic.Int64
			swap(t, &readTables, func() ([]Socket, error) { n.Add(1); return readProcTables() })
			if !p.diag {
				swap(t, &openDiag, func() (int, error) { return -1, unix.EPERM })
			}
			test(t, p.diag, n.Load)
		})
	}
}

// swap sets *v to new for the test.
func swap[T any](t *testing.T, v *T, new T) {
	old := *v
	*v = new
	t.Cleanup(func() { *v = old })
}

func deferAccept(fd int) error {
	return unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_DEFER_ACCEPT, 30)
}

func bindToLoopback(fd int) error {
	return unix.SetsockoptString(fd, unix.SOL_SOCKET, unix.SO_BINDTODEVICE, "lo")
}

func mapped(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom16(a.Addr().As16()), a.Port())
}

func TestPeer(t *testing.T) {
	const other = 54321 // a uid no test runs as
	self := os.Geteuid()
	tests := []struct {
		name     string
		network  string
		listen   string
		dial     string // the address dialled, on the listener's port
		uid      int
		opt      func(fd int) error
		accepted bool
		mapped   bool  // Peer is given the addresses v4-mapped
		state    State // Established unless set
		tables   bool  // sock_diag does not tell: Peer reads the tables
	}{
		{name: "own listener, not accepted yet", network: "tcp4", listen: "127.0.0.1:0", uid: self},
		{name: "own listener, accepted", network: "tcp4", listen: "127.0.0.1:0", uid: self, accepted: true},
		{name: "own dual-stack listener", network: "tcp", listen: "[::]:0", uid: self, accepted: true},
		{name: "own dual-stack listener, asked v4-mapped", network: "tcp", listen: "[::]:0", uid: self, mapped: true},
		{name: "own IPv6 listener", network: "tcp6", listen: "[::1]:0", dial: "::1", uid: self, accepted: true},
		{name: "another user's listener, not accepted yet", network: "tcp4", listen: "127.0.0.1:0", uid: other},
		{name: "another user's listener, accepted", network: "tcp4", listen: "127.0.0.1:0", uid: other, accepted: true},
		{name: "another user's wildcard listener", network: "tcp4", listen: "0.0.0.0:0", uid: other, accepted: true},
		{name: "another user's dual-stack listener", network: "tcp", listen: "[::]:0", uid: other},
		{name: "another user's IPv6 listener, not accepted yet", network: "tcp6", listen: "[::1]:0", dial: "::1", uid: other},
		// The server keeps a request socket until data arrives; sock_diag
		// shows uid 0 for it, the tables its listener's.
		{name: "own listener deferring accept", network: "tcp4", listen: "127.0.0.1:0", uid: self, opt: deferAccept, state: SynRecv, tables: true},
		{name: "another user's listener deferring accept", network: "tcp4", listen: "127.0.0.1:0", uid: other, opt: deferAccept, state: SynRecv, tables: true},
		// An exact sock_diag lookup asks on no device, which misses a
		// socket bound to one.
		{name: "another user's listener bound to lo", network: "tcp4", listen: "127.0.0.1:0", uid: other, opt: bindToLoopback, tables: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.uid != self && self != 0 {
				t.Skip("needs root to make a socket of another uid")
			}
			paths(t, func(t *testing.T, diag bool, reads func() int64) {
				s := serveAs(t, tc.network, tc.listen, tc.uid, tc.opt)
				dial := cmp.Or(tc.dial, "127.0.0.1")
				c, err := net.Dial("tcp", netip.AddrPortFrom(netip.MustParseAddr(dial), s.addr.Port()).String())
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if tc.accepted {
					s.acceptOne(t)
				}
				local, remote := addrOf(c.LocalAddr()), addrOf(c.RemoteAddr())
				before := reads()
				var got Socket
				if tc.mapped {
					got, err = Peer(mapped(local), mapped(remote))
				} else {
					got, err = Peer(local, remote)
				}
				if err != nil {
					t.Fatal(err)
				}
				if got.UID != uint32(tc.uid) || got.Local != remote || got.Remote != local || got.State != cmp.Or(tc.state, Established) {
					t.Errorf("peer = %+v; want uid %d at %v connected to %v, state %v", got, tc.uid, remote, local, cmp.Or(tc.state, Established))
				}
				if tc.accepted == (got.Inode == 0) {
					t.Errorf("peer = %+v: want an inode exactly when the connection is accepted (%v)", got, tc.accepted)
				}
				if read, want := reads() > before, !diag || tc.tables; read != want {
					t.Errorf("Peer read the tables: %v, want %v", read, want)
				}
			})
		})
	}
}

func TestPeerMissing(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T) (local, remote netip.AddrPort)
	}{
		{"nothing there", func(*testing.T) (netip.AddrPort, netip.AddrPort) {
			return netip.MustParseAddrPort("127.0.0.1:1"), netip.MustParseAddrPort("127.0.0.1:2")
		}},
		// An exact sock_diag lookup that misses answers with the listener.
		{"a listener, no connection from us", func(t *testing.T) (netip.AddrPort, netip.AddrPort) {
			l := listen(t)
			return netip.MustParseAddrPort("127.0.0.1:1"), addrOf(l.Addr())
		}},
		{"the other end in TIME_WAIT", timeWait},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			paths(t, func(t *testing.T, _ bool, _ func() int64) {
				local, remote := tc.make(t)
				if got, err := Peer(local, remote); !errors.Is(err, ErrNoPeer) {
					t.Fatalf("Peer = %+v, %v; want ErrNoPeer", got, err)
				}
			})
		})
	}
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// timeWait makes a connection whose server end, having closed first, is
// in TIME_WAIT, and returns the client's addresses.
func timeWait(t *testing.T) (local, remote netip.AddrPort) {
	l := listen(t)
	c, err := net.Dial("tcp4", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	sc, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	local, remote = addrOf(c.LocalAddr()), addrOf(c.RemoteAddr())
	sc.Close()
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("read after the server closed: %v, want EOF", err)
	}
	c.Close()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		all, err := readProcTables()
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(all, func(s Socket) bool { return s.Local == remote && s.Remote == local && s.State == TimeWait }) {
			return local, remote
		}
		if time.Now().After(deadline) {
			t.Fatal("the server's end never reached TIME_WAIT")
		}
	}
}

// TestPeerRetry makes the other end while Peer waits after its first
// look: the answer is the connection, not the listener a missed lookup
// finds, and not ErrNoPeer.
func TestPeerRetry(t *testing.T) {
	paths(t, func(t *testing.T, _ bool, _ func() int64) {
		l := listen(t)
		remote := addrOf(l.Addr())
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
			t.Fatal(err)
		}
		sa, err := unix.Getsockname(fd)
		if err != nil {
			t.Fatal(err)
		}
		local := netip.AddrPortFrom(remote.Addr(), uint16(sa.(*unix.SockaddrInet4).Port))
		pauses := 0
		swap(t, &pause, func(time.Duration) {
			pauses++
			if pauses == 1 {
				if err := unix.Connect(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}, Port: int(remote.Port())}); err != nil {
					t.Error(err)
				}
			}
		})
		got, err := Peer(local, remote)
		if err != nil {
			t.Fatal(err)
		}
		if got.Local != remote || got.Remote != local || got.UID != uint32(os.Geteuid()) || pauses != 1 {
			t.Errorf("peer = %+v after %d pauses; want ours at %v connected to %v after 1", got, pauses, remote, local)
		}
	})
}

func TestListening(t *testing.T) {
	paths(t, func(t *testing.T, diag bool, reads func() int64) {
		l := listen(t)
		c, err := net.Dial("tcp4", l.Addr().String()) // a connection is not a listener
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		wants := []net.Addr{l.Addr()}
		if l6, err := net.Listen("tcp6", "[::1]:0"); err == nil { // where there is IPv6
			defer l6.Close()
			wants = append(wants, l6.Addr())
		}
		got, err := Listening(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		found := map[netip.AddrPort]int{}
		for _, s := range got {
			if s.State != Listen {
				t.Errorf("%+v is not listening", s)
			}
			found[s.Local]++
			if s.UID != uint32(os.Geteuid()) || s.Inode == 0 {
				t.Errorf("our listener = %+v; want our uid and an inode", s)
			}
		}
		for _, want := range wants {
			if found[addrOf(want)] != 1 {
				t.Errorf("Listening(self) = %+v; want our listener %v once", got, want)
			}
		}
		if read := reads() > 0; read == diag {
			t.Errorf("Listening read the tables: %v, want %v", read, !diag)
		}
		if _, err := Listening(1 << 30); err == nil {
			t.Errorf("Listening of a pid that cannot exist succeeded")
		}
	})
}
