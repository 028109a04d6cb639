//go:build unix

package runner

import (
	"bytes"
	"strconv"

	"golang.org/x/sys/unix"
)

// statFacts is what the bytecode's key is of for the file at path, as the
// runner writes it (bytecode.py): its inode, size, mtime and change time
// in ns, through its links (a venv's python is one), as sys.executable's
// stat is.
func statFacts(path string) (string, bool) {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return "", false
	}
	b := make([]byte, 0, 80)
	b = strconv.AppendUint(b, st.Ino, 10)
	b = strconv.AppendInt(append(b, ' '), st.Size, 10)
	b = strconv.AppendInt(append(b, ' '), st.Mtim.Nano(), 10)
	b = strconv.AppendInt(append(b, ' '), st.Ctim.Nano(), 10)
	return string(b), true
}

// bytecodeHolds reports whether path is a regular file of this user's
// that no one else may write, whose header is a magic number's (a .pyc's
// first four bytes end in \r\n) then key. Opened without following a link
// and without blocking on a FIFO.
func bytecodeHolds(path string, key []byte) bool {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Mode&0o022 != 0 ||
		int(st.Uid) != unix.Geteuid() {
		return false
	}
	var head [16]byte
	n, err := unix.Pread(fd, head[:], 0)
	return err == nil && n == len(head) && head[2] == '\r' && head[3] == '\n' && bytes.Equal(head[4:], key)
}
