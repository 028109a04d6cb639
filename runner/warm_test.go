package runner

import (
	"testing"
	"time"
)

// warmed is a cell whose result says whether the warm-up has begun: its
// first import is token, which nothing else at start-up loads.
const warmed = "import sys\n'token' in sys.modules"

// TestWarmUpWaitsWhileBusy: a cell the host sent before ready runs with no
// warm-up beside it, however long it takes (four quiet spells here; the old
// runner began it at ready), and so does the next one, which the host
// pipelined while the first ran: the warm-up only runs once the runner is
// idle. (Sending the second after the first's end made the test depend on
// the round trip's speed: under load it took longer than a quiet spell.)
func TestWarmUpWaitsWhileBusy(t *testing.T) {
	p := start(t, startOpts{first: "import time\ntime.sleep(0.2)\n" + warmed})
	p.seq++
	p.send(map[string]any{"id": "c2", "code": warmed})
	wantResult("False")(t, p.collect("c1", nil))
	wantResult("False")(t, p.collect("c2", nil))
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
