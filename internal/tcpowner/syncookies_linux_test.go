package tcpowner

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// errNoNetns: this test cannot make a network namespace here.
var errNoNetns = errors.New("no network namespace")

// TestPeerSyncookies connects in a network namespace whose listeners answer
// every SYN with a cookie (tcp_syncookies=2): the server's end is made
// from our ACK, with no request socket before it, and carries its
// listener's uid until accepted, in sock_diag as in the tables.
func TestPeerSyncookies(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root for a network namespace and a socket of another uid")
	}
	paths(t, func(t *testing.T, diag bool, reads func() int64) {
		// The namespace is the test thread's, not the process's.
		swap(t, &tables, []string{"/proc/thread-self/net/tcp", "/proc/thread-self/net/tcp6"})
		errc := make(chan error)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread, in its own namespace, ends with this goroutine
			errc <- syncookiePeers(diag, reads)
		}()
		err := <-errc
		if errors.Is(err, errNoNetns) {
			t.Skip(err)
		}
		if err != nil {
			t.Fatal(err)
		}
	})
}

// syncookiePeers runs on a locked thread that it moves to a new network namespace.
func syncookiePeers(diag bool, reads func() int64) error {
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("%w: %v", errNoNetns, err)
	}
	if err := loopbackUp(); err != nil {
		return err
	}
	if err := os.WriteFile("/proc/sys/net/ipv4/tcp_syncookies", []byte("2"), 0); err != nil {
		return err
	}
	cookies, err := tcpExt("SyncookiesRecv")
	if err != nil {
		return err
	}
	const other = 54321
	cases := []struct {
		uid      int
		accepted bool
	}{{0, false}, {0, true}, {other, false}, {other, true}}
	for _, c := range cases {
		if err := syncookiePeer(c.uid, c.accepted, diag, reads); err != nil {
			return fmt.Errorf("uid %d, accepted %v: %w", c.uid, c.accepted, err)
		}
	}
	if now, err := tcpExt("SyncookiesRecv"); err != nil || now-cookies != len(cases) {
		return fmt.Errorf("the kernel took %d syncookies (%v), want %d: the test did not test them", now-cookies, err, len(cases))
	}
	return nil
}

func syncookiePeer(uid int, accepted, diag bool, reads func() int64) error {
	_ = syscall.Setfsuid(uid) // the listener's and the acceptor's uid
	defer syscall.Setfsuid(0)
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer l.Close()
	c, err := net.Dial("tcp4", l.Addr().String())
	if err != nil {
		return err
	}
	defer c.Close()
	if accepted {
		sc, err := l.Accept()
		if err != nil {
			return err
		}
		defer sc.Close()
	}
	local, remote := addrOf(c.LocalAddr()), addrOf(c.RemoteAddr())
	before := reads()
	got, err := Peer(local, remote)
	if err != nil {
		return err
	}
	if got.UID != uint32(uid) || got.Local != remote || got.Remote != local || got.State != Established || accepted == (got.Inode == 0) {
		return fmt.Errorf("peer = %+v; want uid %d at %v connected to %v, established, an inode only if accepted", got, uid, remote, local)
	}
	if read := reads() > before; read == diag {
		return fmt.Errorf("Peer read the tables: %v, want %v", read, !diag)
	}
	return nil
}

// loopbackUp brings up lo, which a new network namespace has down.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// tcpExt is a TcpExt counter of this thread's network namespace.
func tcpExt(name string) (int, error) {
	b, err := os.ReadFile("/proc/thread-self/net/netstat")
	if err != nil {
		return 0, err
	}
	var names [][]byte
	for line := range bytes.Lines(b) {
		f := bytes.Fields(line)
		if len(f) == 0 || string(f[0]) != "TcpExt:" {
			continue
		}
		if names == nil {
			names = f
			continue
		}
		for i, n := range names {
			if string(n) == name && i < len(f) {
				return strconv.Atoi(string(f[i]))
			}
		}
	}
	return 0, fmt.Errorf("no TcpExt %s in /proc/thread-self/net/netstat", name)
}
