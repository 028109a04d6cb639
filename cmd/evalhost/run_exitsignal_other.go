//go:build !linux

package main

import (
	"os"
	"os/signal"
	"syscall"
)

// killsByDefault says whether evalhost can die of sig here: only of those
// Go dies of itself once nothing is notified of them (os/signal cannot
// restore the kernel's default for the others); a run exits 128+sig for
// the rest, as a shell reports them.
func killsByDefault(sig syscall.Signal) bool {
	return sig == syscall.SIGINT || sig == syscall.SIGTERM || sig == syscall.SIGHUP
}

// raise makes evalhost die of sig; it returns only if the process lives
// on (then exitAs exits).
func raise(sig syscall.Signal) {
	signal.Reset(sig)
	_ = syscall.Kill(os.Getpid(), sig)
}
