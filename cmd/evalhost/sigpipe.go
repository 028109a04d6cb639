package main

import (
	"os"
	"os/signal"
	"syscall"
)

// catchSIGPIPE makes a write to a closed stdout or stderr fail with EPIPE
// instead of killing evalhost with SIGPIPE (Go's default for fds 1 and 2),
// so the command can end its cells' processes and finish its work; the
// returned func restores the default.
func catchSIGPIPE() (restore func()) {
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	return func() { signal.Stop(pipe) }
}
