//go:build linux && amd64

package runner

import "syscall"

// epollWaits are where an event loop's epoll selector waits: glibc's
// epoll_wait is epoll_wait(2) here, epoll_pwait(2) kept for a libc that
// maps it so.
var epollWaits = []int{syscall.SYS_EPOLL_WAIT, syscall.SYS_EPOLL_PWAIT}
