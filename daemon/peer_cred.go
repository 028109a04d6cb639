//go:build linux || darwin || freebsd

package daemon

import "net"

// socketUID asks get, with c's descriptor, for the uid of the process at
// the other end; -1 when it cannot be known.
func socketUID(c *net.UnixConn, get func(fd int) (int, error)) (int, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return -1, err
	}
	uid := -1
	var gerr error
	if err := raw.Control(func(fd uintptr) { uid, gerr = get(int(fd)) }); err != nil {
		return -1, err
	}
	if gerr != nil {
		return -1, gerr
	}
	return uid, nil
}
