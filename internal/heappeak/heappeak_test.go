package heappeak

import (
	"runtime"
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
	if got := s.Stop(); got < 64<<20 {
		t.Fatalf("peak growth %d bytes, want at least the 64 MiB held", got)
	}
}

func TestStopEndsTheSampler(t *testing.T) {
	leakcheck.Check(t, leakcheck.Options{})
	Start().Stop()
}
