//go:build darwin || freebsd

package daemon

import (
	"net"

	"golang.org/x/sys/unix"
)

// peerUID is the uid of the process at the other end of a Unix socket
// (LOCAL_PEERCRED), or -1 when it cannot be known.
func peerUID(c *net.UnixConn) (int, error) {
	return socketUID(c, func(fd int) (int, error) {
		cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		if err != nil {
			return -1, err
		}
		return int(cred.Uid), nil
	})
}
