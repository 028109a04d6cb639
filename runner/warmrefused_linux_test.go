package runner

import (
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/testkit"
)

// TestWarmUpThreadRefusedKeepsServing: the warm-up's thread starts at the
// runner's first wait for a request, which comes after a cell the host
// sent before ready. A cell that left no room for a thread must not cost
// the session: the warm-up is best effort, and the next cell runs, as it
// would under python3. The runner used to die there of "can't start new
// thread", a traceback on its stderr. The cell asks every new thread for a
// stack no system gives (1 TiB): a cap on the address space, the case met
// in use (tests' TestRunAfterACellCappedThreads, against python3), also
// starved the process now and then (a MemoryError compiling the next cell
// on 3.10; on 3.8, glibc's abort loading libgcc_s for a thread's
// pthread_exit), ~1 run in 200.
func TestWarmUpThreadRefusedKeepsServing(t *testing.T) {
	const capped = "import _thread\n" +
		"_thread.stack_size(1 << 40)\n" +
		"try:\n    _thread.start_new_thread(int, ())\n    refused = False\nexcept RuntimeError:\n    refused = True\n" +
		"refused"
	p := start(t, startOpts{first: capped})
	c1 := p.collect("c1", nil)
	if text(t, wantResultFrame(t, c1).Bundle, "text/plain") != "True" {
		t.Skip("a new thread still fits under the cap here: the stimulus did not take")
	}
	awaitRequestWait(t, p)
	wantResult("2")(t, p.run("1 + 1"))
}

// awaitRequestWait waits until the runner's main thread blocks in its
// read of the requests pipe (past the first wait's warm-up start); the
// runner's exit fails the test.
func awaitRequestWait(t *testing.T, p *proc) {
	t.Helper()
	deadline := time.Now().Add(watchdog)
	for {
		select {
		case <-p.exited:
			t.Fatalf("the runner exited as it went idle (%v); its stderr: %q", p.waitEr, p.errs.snapshot())
		default:
		}
		in, b, err := testkit.InSyscall(p.cmd.Process.Pid, syscall.SYS_READV)
		if err != nil {
			t.Skipf("cannot tell where the runner waits: %v", err)
		}
		if in {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("watchdog: the runner is not waiting for a request within %v (/proc/%d/syscall: %q)", watchdog, p.cmd.Process.Pid, b)
		}
		time.Sleep(time.Millisecond)
	}
}
