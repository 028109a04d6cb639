//go:build unix

package runner

import (
	"os"
	"syscall"
)

// intactFile reports whether path is a regular file of this user's, writable
// by no one else, holding exactly want. Every start checks every file, so
// this is open, fstat, one read and close on the descriptor (a symlink is
// refused by O_NOFOLLOW), not os.ReadFile's seven calls after an Lstat.
// buf is read into, the caller's, one for every file; a smaller one than
// len(want)+1 bytes is replaced.
func intactFile(path string, want string, buf []byte) bool {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG ||
		st.Mode&0o022 != 0 || int(st.Uid) != os.Geteuid() || st.Size != int64(len(want)) {
		return false
	}
	if cap(buf) <= len(want) {
		buf = make([]byte, len(want)+1)
	}
	buf = buf[:len(want)+1] // one byte more: a file that grew is not intact
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return false
		}
		if m == 0 {
			break
		}
		n += m
	}
	return string(buf[:n]) == want
}
