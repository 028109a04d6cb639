package tcpowner

import (
	"net"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// BenchmarkPeer looks up one connection's other end among n unrelated
// loopback connections (2n sockets and a listener), through sock_diag and
// through the tables (sock_diag refused, as by a seccomp filter).
func BenchmarkPeer(b *testing.B) {
	for _, n := range []int{0, 2000} {
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		var conns []net.Conn
		for range n + 1 {
			c, err := net.Dial("tcp4", l.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			sc, err := l.Accept()
			if err != nil {
				b.Fatal(err)
			}
			conns = append(conns, c, sc)
		}
		c := conns[len(conns)-2]
		local, remote := addrOf(c.LocalAddr()), addrOf(c.RemoteAddr())
		for _, path := range []string{"sock_diag", "tables"} {
			b.Run(path+"/conns="+strconv.Itoa(n), func(b *testing.B) {
				if path == "tables" {
					old := openDiag
					openDiag = func() (int, error) { return -1, unix.EPERM }
					defer func() { openDiag = old }()
				}
				for b.Loop() {
					if _, err := Peer(local, remote); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		for _, c := range conns {
			c.Close()
		}
		l.Close()
	}
}
