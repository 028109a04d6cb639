//go:build !linux

package reaper

// awaitExit returns at once where waitid is not at hand: Wait's reap and a
// Kill racing it are apart by nanoseconds, and Kill is only the last resort
// for a reaper that ignored its lifeline for seconds.
func awaitExit(pid int) {}
