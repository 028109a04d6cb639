package runner

import (
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/testkit"
)

// awaitLoopWait waits until the runner's main thread blocks in its event
// loop's wait (asyncio's default selector: epoll), where an interrupt of
// a top-level await is meant to land; the runner's exit fails the test. A
// fixed pause before the interrupt let a busy machine's land in the cell's
// code before its await (3.9 under make test-pythons; nearly every time
// without the pause, on every version).
func awaitLoopWait(t *testing.T, p *proc) {
	t.Helper()
	deadline := time.Now().Add(watchdog)
	for {
		select {
		case <-p.exited:
			t.Fatalf("the runner exited before its event loop waited (%v); its stderr: %q", p.waitEr, p.errs.snapshot())
		default:
		}
		in, b, err := testkit.InSyscall(p.cmd.Process.Pid, epollWaits...)
		if err != nil {
			t.Skipf("cannot tell where the runner waits: %v", err)
		}
		if in {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("watchdog: the runner's event loop is not waiting within %v (/proc/%d/syscall: %q)", watchdog, p.cmd.Process.Pid, b)
		}
		time.Sleep(time.Millisecond)
	}
}
