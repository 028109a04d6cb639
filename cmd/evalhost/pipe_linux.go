package main

import (
	"io"
	"os"
	"syscall"
)

// outPipeSize is what run, serve and mcp grow a pipe they write to, as host
// grows the interpreter's: with the default 64 KiB, bulk output waits for the reader
// (wc, a pager) at every chunk; 1 MiB cut run's CPU for 200 MiB by a fifth.
const outPipeSize = 1 << 20

// growOutPipe grows w, when it is a pipe smaller than outPipeSize. It never
// shrinks one, and a refusal (the user's pipe memory is at its limit)
// leaves the pipe as it was.
func growOutPipe(w io.Writer) {
	f, ok := w.(*os.File)
	if !ok {
		return
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	_ = rc.Control(func(fd uintptr) {
		size, _, errno := syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_GETPIPE_SZ, 0)
		if errno == 0 && size < outPipeSize {
			_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, fd, syscall.F_SETPIPE_SZ, outPipeSize)
		}
	})
}
