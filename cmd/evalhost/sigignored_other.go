//go:build !linux || mips || mipsle || mips64 || mips64le

package main

import (
	"os/signal"
	"syscall"
)

// sigIgnored says whether sig is ignored now (sigignored_linux.go); here
// only what os/signal knows: an inherited SIG_IGN of SIGINT or SIGHUP.
func sigIgnored(sig syscall.Signal) bool { return signal.Ignored(sig) }
