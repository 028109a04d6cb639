//go:build !linux

package host

import (
	"os"
	"syscall"
)

// growPipe: pipe buffers cannot be resized outside Linux.
func growPipe(*os.File) {}

// wakeThread sends sig to the runner. Without tgkill it is process-directed,
// so the kernel may deliver it to a thread other than the main one; the
// interrupt still lands, but a blocking call in the main thread may only
// see it when the call returns.
func wakeThread(pid int, sig syscall.Signal) {
	_ = syscall.Kill(pid, sig)
}
