//go:build !linux

package main

import "syscall"

// serveAttr: the measured server leads its own process group. Without a
// parent-death signal it ends when its stdin closes with the benchmark.
func serveAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
