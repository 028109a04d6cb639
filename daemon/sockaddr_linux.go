package daemon

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// longSocketPaths: a socket path of any length is reached by a short name.
const longSocketPaths = true

// socketAddr is the name to bind or connect the socket at path by. A path
// longer than sun_path holds is named /proc/self/fd/N/<base>, N an O_PATH
// descriptor of its directory, which the kernel resolves to the same file:
// the socket stays in the private directory, where a socket under a shared
// temp dir could be blocked by another user creating its directory first.
// release closes the descriptor, once the bind or connect is done.
func socketAddr(path string) (addr string, release func(), err error) {
	if len(path) <= maxSocketPath {
		return path, func() {}, nil
	}
	fd, err := unix.Open(filepath.Dir(path), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", nil, fmt.Errorf("cannot open the socket's directory: %w", &os.PathError{Op: "open", Path: filepath.Dir(path), Err: err})
	}
	proc := fmt.Sprintf("/proc/self/fd/%d", fd)
	if fi, err := os.Stat(proc); err != nil || !fi.IsDir() {
		unix.Close(fd)
		return "", nil, fmt.Errorf("%w: %s is %d bytes, longer than a Unix socket's name may be (%d), and /proc is not mounted to name it by a short path; set EVALHOST_HOME to a shorter directory",
			errSocketPath, path, len(path), maxSocketPath)
	}
	return proc + "/" + filepath.Base(path), func() { unix.Close(fd) }, nil
}
