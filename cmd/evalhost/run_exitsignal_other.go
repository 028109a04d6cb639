//go:build !linux

package main

import (
	"os"
	"os/signal"
	"syscall"
)

// canRaise says whether evalhost can die of sig here: only of those Go
// dies of itself once nothing is notified of them (os/signal cannot
// restore the kernel's default for the others), and not of one it was
// started ignoring, which signal.Reset leaves ignored; a run exits
// 128+sig for the rest, as a shell reports them.
func canRaise(sig syscall.Signal) bool {
	return (sig == syscall.SIGINT || sig == syscall.SIGTERM || sig == syscall.SIGHUP) && !signal.Ignored(sig)
}

// raise makes evalhost die of sig; it returns only if the process lives
// on (then exitAs exits).
func raise(sig syscall.Signal) {
	signal.Reset(sig)
	_ = syscall.Kill(os.Getpid(), sig)
}
