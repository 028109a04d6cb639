package runner

import (
	"testing"
	"time"
)

// warmed is a cell whose result says whether the warm-up has begun: its
// first import is token, which nothing else at start-up loads.
const warmed = "import sys\n'token' in sys.modules"

// TestWarmUpWaitsWhileBusy: a cell the host sent before ready runs with no
// warm-up beside it, however long it takes (the old runner began it at
// ready and finished it within the cell's 30 ms), and so does the next one,
// sent right after: the warm-up only runs once the runner is idle.
func TestWarmUpWaitsWhileBusy(t *testing.T) {
	p := start(t, startOpts{first: "import time\ntime.sleep(0.03)\n" + warmed})
	wantResult("False")(t, p.collect("c1", nil))
	wantResult("False")(t, p.run(warmed))
}

// TestWarmUpRunsWhenIdle: once no request has come for a while, the
// runner warms up what the first error needs, all of it: a step cut short
// by this test's own cells goes on at the next quiet spell.
func TestWarmUpRunsWhenIdle(t *testing.T) {
	p := start(t, startOpts{})
	deadline := time.Now().Add(watchdog)
	for {
		c := p.run(warmed + " and 'traceback' in sys.modules and 'ast' in sys.modules")
		if text(t, wantResultFrame(t, c).Bundle, "text/plain") == "True" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no warm-up within %v of idling", watchdog)
		}
		// Idle: longer than WARM_QUIET, the quiet the warm-up waits for.
		time.Sleep(200 * time.Millisecond)
	}
}
