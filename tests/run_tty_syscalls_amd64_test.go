//go:build linux && amd64

package tests

import "syscall"

// readingSyscalls are where an interpreter waits for its terminal: read(2),
// or select(2)/pselect6(2) as readline's input() does.
var readingSyscalls = []int{syscall.SYS_READ, syscall.SYS_SELECT, syscall.SYS_PSELECT6}
