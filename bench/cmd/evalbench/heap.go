package main

import (
	"runtime"
	"sync"
	"time"
)

// heapSampler records the peak Go heap of this process while it runs.
type heapSampler struct {
	base, peak uint64
	done       chan struct{}
	wg         sync.WaitGroup
}

func (h *heapSampler) start() {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	h.base, h.peak = ms.HeapAlloc, ms.HeapAlloc
	h.done = make(chan struct{})
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-h.done:
				return
			case <-tick.C:
				runtime.ReadMemStats(&ms)
				h.peak = max(h.peak, ms.HeapAlloc)
			}
		}
	}()
}

// stop ends sampling and returns the peak growth in MB (0 if not started).
func (h *heapSampler) stop() float64 {
	if h.done == nil {
		return 0
	}
	close(h.done)
	h.wg.Wait()
	return float64(h.peak-h.base) / 1e6
}
