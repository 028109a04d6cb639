package sessions

import "syscall"

// probeAttr: the probe leads its own session and dies with this process.
func probeAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
}
