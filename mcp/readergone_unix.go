//go:build unix

package mcp

import (
	"io"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// watchReader returns a channel closed once the reader of w is gone: w is a
// pipe or a socket (a syscall.Conn) whose other end closed, which poll
// reports as POLLERR or POLLHUP without a write. stop ends the watch and
// returns once its goroutine has. For another w the channel never closes.
func watchReader(w io.Writer) (gone <-chan struct{}, stop func()) {
	ch, quit := make(chan struct{}), make(chan struct{})
	sc, ok := w.(syscall.Conn)
	if !ok {
		return ch, func() {}
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return ch, func() {}
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Control keeps the descriptor open while it polls; the polls are
		// short so that stop (and a Close of w) waits 100 ms at most.
		_ = rc.Control(func(fd uintptr) {
			fds := []unix.PollFd{{Fd: int32(fd)}}
			for {
				select {
				case <-quit:
					return
				default:
				}
				n, err := unix.Poll(fds, 100)
				if err == nil && n > 0 && fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0 {
					close(ch)
					return
				}
			}
		})
	}()
	var once sync.Once
	return ch, func() { once.Do(func() { close(quit); wg.Wait() }) }
}
