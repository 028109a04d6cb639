package main

import "syscall"

// serveAttr: the measured server leads its own process group and dies with
// the benchmark.
func serveAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
