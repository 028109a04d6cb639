//go:build unix

package runner

import (
	"os"
	"syscall"
)

// intactFile reports whether path is a regular file of this user's, writable
// by no one else, holding exactly want. Every start may check every file,
// so this is open, fstat, one read and close on the descriptor (readOwn),
// not os.ReadFile's seven calls after an Lstat. buf is read into, the
// caller's, one for every file; a smaller one than len(want)+1 bytes is
// replaced.
func intactFile(path string, want string, buf []byte) bool {
	data, ok := readOwn(path, buf, func(size int64) bool { return size == int64(len(want)) })
	return ok && string(data) == want
}

// readOwn reads path when it is a regular file of this user's, writable by
// no one else (a symlink is refused by O_NOFOLLOW), whose size fits says
// it may have; into buf when it is large enough. It reads one byte more
// than the size: a file that grew meanwhile is not what was checked.
func readOwn(path string, buf []byte, fits func(size int64) bool) ([]byte, bool) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, false
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG ||
		st.Mode&0o022 != 0 || int(st.Uid) != os.Geteuid() || !fits(st.Size) {
		return nil, false
	}
	if int64(cap(buf)) <= st.Size {
		buf = make([]byte, st.Size+1)
	}
	buf = buf[:st.Size+1]
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		if m == 0 {
			break
		}
		n += m
	}
	return buf[:n], true
}
