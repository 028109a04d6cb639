package testkit

import (
	"io"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
)

// LeaderExits is a Python script whose main thread exits alone (SYS_exit,
// its first argument, not exit_group): the kernel shows the leader as a
// zombie while the other thread, which holds the process's descriptors
// and cwd, runs until its stdin closes, then exits the process with 0. A
// Go process's leader may exit first so as SIGKILL takes its threads one
// by one; code that takes a zombie leader for an ended process is wrong.
const LeaderExits = `
import ctypes, os, sys, threading
def rest():
    os.read(0, 1)
    os._exit(0)
threading.Thread(target=rest).start()
ctypes.CDLL(None).syscall(ctypes.c_long(int(sys.argv[1])), ctypes.c_long(0))
`

// StartLeaderExits starts python3 (Python's) running LeaderExits in dir
// ("": the test's), and returns it and its stdin, whose close ends it.
// Its leader may not have exited yet: await that (WaitState's 'Z', or the
// caller's own reader of the state). It is killed and reaped when tb's
// test ends, if it has not been waited for.
func StartLeaderExits(tb testing.TB, dir string) (*exec.Cmd, io.WriteCloser) {
	tb.Helper()
	cmd := exec.Command(Python(tb), "-c", LeaderExits, strconv.Itoa(syscall.SYS_EXIT))
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe() // kept open: the thread blocks on it
	if err != nil {
		tb.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		stdin.Close()
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return cmd, stdin
}
