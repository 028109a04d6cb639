//go:build !linux

package daemon

// longSocketPaths: without /proc/self/fd, a long socket path cannot be
// named by a short one, so PathsFor moves it.
const longSocketPaths = false

// socketAddr is path itself: PathsFor kept it short enough.
func socketAddr(path string) (string, func(), error) { return path, func() {}, nil }
