//go:build unix && !linux && !darwin && !freebsd && !netbsd && !openbsd && !dragonfly

package sentinput

// pending is unknown here: Read takes what is there until none is.
func pending(uintptr) (int, bool) { return 0, false }
