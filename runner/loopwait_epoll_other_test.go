//go:build linux && !amd64

package runner

import "syscall"

// epollWaits are where an event loop's epoll selector waits: epoll_pwait(2)
// (no epoll_wait(2) on these architectures).
var epollWaits = []int{syscall.SYS_EPOLL_PWAIT}
