//go:build linux && !amd64

package tests

import "syscall"

// readingSyscalls are where an interpreter waits for its terminal: read(2),
// or pselect6(2) as readline's input() does (select(2) is pselect6 here).
var readingSyscalls = []int{syscall.SYS_READ, syscall.SYS_PSELECT6}
