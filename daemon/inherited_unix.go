//go:build unix

package daemon

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// maxScannedFD bounds the scan of descriptors where none can be listed (no
// /proc or /dev/fd): a soft limit of millions would cost seconds.
const maxScannedFD = 1 << 16

// CloseInherited closes every descriptor this process inherited beyond
// stdin, stdout and stderr, but its ready pipe (ReadyFDEnv). The first
// command's own extra descriptors (a harness's pipe, `4>&1`, a make
// jobserver's) would otherwise be held by the process, and by every
// interpreter it starts, for as long as it lives: whoever reads that pipe
// to its end (`run --session s ... 4>&1 | cat`) waited up to its idle end.
// An inherited descriptor is one without close-on-exec: Go opens all of its
// own with it, so none of the runtime's is closed.
func CloseInherited() {
	ready, _ := strconv.Atoi(os.Getenv(ReadyFDEnv))
	for _, fd := range openFDs() {
		if fd <= 2 || fd == ready {
			continue
		}
		if flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err == nil && flags&unix.FD_CLOEXEC == 0 {
			unix.Close(fd)
		}
	}
}

// openFDs lists the process's descriptors, or every number up to the soft
// limit (at most maxScannedFD) where they cannot be listed. The listing's
// own descriptor is close-on-exec, so it is never closed.
func openFDs() []int {
	for _, dir := range []string{"/proc/self/fd", "/dev/fd"} {
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		fds := make([]int, 0, len(ents))
		for _, e := range ents {
			if fd, err := strconv.Atoi(e.Name()); err == nil {
				fds = append(fds, fd)
			}
		}
		return fds
	}
	n := maxScannedFD
	var lim unix.Rlimit
	// Cur is an int64 on the BSDs, a uint64 elsewhere; their infinities are
	// both past maxScannedFD as a uint64.
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &lim) == nil && uint64(lim.Cur) < uint64(n) {
		n = int(lim.Cur)
	}
	fds := make([]int, n)
	for i := range fds {
		fds[i] = i
	}
	return fds
}
