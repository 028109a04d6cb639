package gateway

import (
	"net"
	"syscall"
)

// quickAckConn re-arms TCP_QUICKACK after every read. Tornado (the kernel
// gateway's server) leaves Nagle on, so it holds each small websocket frame
// until the previous one is acknowledged; with Linux's delayed ACK every cell
// would then cost ~40 ms of waiting. Acknowledging at once removes that.
type quickAckConn struct {
	net.Conn
	raw syscall.RawConn
}

func withQuickAck(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return c
	}
	q := &quickAckConn{Conn: c, raw: raw}
	q.arm()
	return q
}

func (q *quickAckConn) Read(p []byte) (int, error) {
	n, err := q.Conn.Read(p)
	q.arm()
	return n, err
}

func (q *quickAckConn) arm() {
	_ = q.raw.Control(func(fd uintptr) {
		_ = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_QUICKACK, 1)
	})
}
