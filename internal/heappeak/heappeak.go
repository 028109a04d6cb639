package heappeak

import (
	"runtime"
	"sync/atomic"
	"time"
)

// interval is short enough to see a flood's buffers, long enough that the
// stop-the-world of each reading does not slow what is measured.
const interval = 20 * time.Millisecond

// Sampler records the peak heap between Start and Stop.
type Sampler struct {
	base       uint64
	peak       atomic.Uint64
	stop, done chan struct{}
}

// Start takes the base and begins sampling.
func Start() *Sampler {
	runtime.GC()
	base := heapAlloc()
	s := &Sampler{base: base, stop: make(chan struct{}), done: make(chan struct{})}
	s.peak.Store(base)
	go s.sample()
	return s
}

func (s *Sampler) sample() {
	defer close(s.done)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-tick.C:
			s.Sample()
		}
	}
}

// Sample takes a reading now, beside the periodic ones: at a moment the
// caller knows to matter (a large value in hand), which the interval could
// miss. Safe from any goroutine until Stop.
func (s *Sampler) Sample() {
	h := heapAlloc()
	for p := s.peak.Load(); h > p && !s.peak.CompareAndSwap(p, h); p = s.peak.Load() {
	}
}

// Stop ends sampling and returns the peak growth over the base, in bytes.
// Call it once.
func (s *Sampler) Stop() uint64 {
	close(s.stop)
	<-s.done
	return s.peak.Load() - s.base
}

func heapAlloc() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
