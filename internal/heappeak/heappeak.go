package heappeak

import (
	"runtime"
	"time"
)

// interval is short enough to see a flood's buffers, long enough that the
// stop-the-world of each reading does not slow what is measured.
const interval = 20 * time.Millisecond

// Sampler records the peak heap between Start and Stop.
type Sampler struct {
	base, peak uint64
	stop, done chan struct{}
}

// Start takes the base and begins sampling.
func Start() *Sampler {
	runtime.GC()
	base := heapAlloc()
	s := &Sampler{base: base, peak: base, stop: make(chan struct{}), done: make(chan struct{})}
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
			s.peak = max(s.peak, heapAlloc())
		}
	}
}

// Stop ends sampling and returns the peak growth over the base, in bytes.
// Call it once.
func (s *Sampler) Stop() uint64 {
	close(s.stop)
	<-s.done
	return s.peak - s.base
}

func heapAlloc() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
