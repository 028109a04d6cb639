//go:build !linux

package sessions

import "syscall"

// probeAttr: the probe leads its own session. There is no parent-death
// signal outside Linux; the probe's timeout bounds it instead.
func probeAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setsid: true}
}
