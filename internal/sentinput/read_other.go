//go:build !unix

package sentinput

import "syscall"

// nonblocking is false: ReadSent ends no input here.
func nonblocking(syscall.RawConn) bool { return false }

// pending is unknown here.
func pending(uintptr) (int, bool) { return 0, false }

// readNow is never reached: nonblocking is false here.
func readNow(syscall.RawConn, []byte) (int, error) { return 0, nil }
