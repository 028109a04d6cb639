package daemon

import (
	"net"
	"syscall"
)

// peerUID is the uid of the process at the other end of a Unix socket
// (SO_PEERCRED), or -1 when it cannot be known.
func peerUID(c *net.UnixConn) (int, error) {
	return socketUID(c, func(fd int) (int, error) {
		cred, err := syscall.GetsockoptUcred(fd, syscall.SOL_SOCKET, syscall.SO_PEERCRED)
		if err != nil {
			return -1, err
		}
		return int(cred.Uid), nil
	})
}
