package heappeak

import (
	"runtime"
	"runtime/debug"
	"testing"
	"testing/synctest"
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
)

// A periodic reading sees what is held at its tick. On synctest's clock
// the tick has been taken, and its reading made, before Sleep returns: a
// real sleep could end before a loaded machine ran the sampler (and Stop
// takes no reading of its own).
func TestPeakSeesALiveAllocation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := Start()
		buf := make([]byte, 64<<20)
		for i := range buf {
			buf[i] = 1 // touched, so it is not optimised away
		}
		// Past the first tick, on the bubble's clock, which reaches the
		// end of the sleep only once the tick's reading has been made.
		time.Sleep(interval + interval/2)
		runtime.KeepAlive(buf)
		if got := s.Stop(); got < 60<<20 { // slack: garbage in the base may be collected meanwhile
			t.Fatalf("peak growth %d bytes, want at least the 64 MiB held", got)
		}
	})
}

func TestSampleSeesAllocationBetweenTicks(t *testing.T) {
	s := Start()
	close(s.stop) // no periodic readings: only Sample's
	<-s.done
	buf := make([]byte, 64<<20)
	s.Sample()
	runtime.KeepAlive(buf)
	if got := s.peak.Load() - s.base; got < 60<<20 { // slack: garbage in the base may be collected meanwhile
		t.Fatalf("peak growth %d bytes, want at least the 64 MiB held at Sample", got)
	}
}

func TestRSSPeakSeesTouchedMemory(t *testing.T) {
	debug.FreeOSMemory() // or the buffer could reuse pages an earlier test left resident
	if !ResetRSSPeak() {
		t.Skip("the resident-set peak cannot be reset here")
	}
	before, ok := RSSPeak()
	if !ok {
		t.Fatal("RSSPeak unreadable where ResetRSSPeak worked")
	}
	buf := make([]byte, 64<<20)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1
	}
	after, _ := RSSPeak()
	runtime.KeepAlive(buf)
	if after < before+60<<20 {
		t.Fatalf("RSS peak %d -> %d bytes, want it to rise by the 64 MiB touched", before, after)
	}
}

func TestStopEndsTheSampler(t *testing.T) {
	leakcheck.Check(t, leakcheck.Options{})
	Start().Stop()
}
