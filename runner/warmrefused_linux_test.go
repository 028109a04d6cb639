package runner

import (
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/testkit"
)

// TestWarmUpThreadRefusedKeepsServing: the warm-up's thread starts at the
// runner's first wait for a request, which comes after a cell the host
// sent before ready. A cell that left no room for a thread (its address
// space capped, as a cell may do to bound its own memory) must not cost
// the session: the warm-up is best effort, and the next cell runs, as it
// would under python3. The runner used to die there of "can't start new
// thread", a traceback on its stderr.
func TestWarmUpThreadRefusedKeepsServing(t *testing.T) {
	const capped = "import resource\n" +
		"vm = next(int(l.split()[1]) * 1024 for l in open('/proc/self/status') if l.startswith('VmSize'))\n" +
		"resource.setrlimit(resource.RLIMIT_AS, (vm + (4 << 20), resource.RLIM_INFINITY))\n" +
		"import _thread\n" +
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
