package heappeak

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
)

func TestPeakSeesALiveAllocation(t *testing.T) {
	s := Start()
	buf := make([]byte, 64<<20)
	for i := range buf {
		buf[i] = 1 // touched, so it is not optimised away
	}
	time.Sleep(5 * interval)
	runtime.KeepAlive(buf)
	if got := s.Stop(); got < 60<<20 { // slack: garbage in the base may be collected meanwhile
		t.Fatalf("peak growth %d bytes, want at least the 64 MiB held", got)
	}
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
