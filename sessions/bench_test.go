package sessions

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/leakcheck"
)

// BenchmarkSessions16x200 runs 200 trivial cells in each of 16 sessions at
// once on this 2-core machine: aggregate cells/s, the host's heap, and the
// interpreters' resident memory.
func BenchmarkSessions16x200(b *testing.B) {
	const sessions, cells = 16, 200
	leakcheck.Check(b, leaks)
	for b.Loop() {
		r := New(Config{Home: b.TempDir(), MaxSessions: sessions})
		var mu sync.Mutex
		pids := map[int]bool{}
		emit := func(_ int, f frames.Frame) {
			if f.Type == frames.TypeReady {
				mu.Lock()
				pids[f.PID] = true
				mu.Unlock()
			}
		}
		// Start every interpreter first: this measures warm throughput.
		var wg sync.WaitGroup
		for s := range sessions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r.Eval(context.Background(), Request{Session: strconv.Itoa(s), Cells: []Cell{{Language: LangPython, Code: "0"}}}, emit)
			}()
		}
		wg.Wait()
		start := time.Now()
		var failed sync.Map
		for s := range sessions {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range cells {
					res, err := r.Eval(context.Background(), Request{Session: strconv.Itoa(s), Cells: []Cell{{Language: LangPython, Code: "1+1"}}}, emit)
					if err != nil || res.Status != StatusOK {
						failed.Store(fmt.Sprint(s, i), err)
					}
				}
			}()
		}
		wg.Wait()
		elapsed := time.Since(start)
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		var rss int64
		for pid := range pids {
			rss += vmRSS(pid)
		}
		b.ReportMetric(float64(sessions*cells)/elapsed.Seconds(), "cells/s")
		b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "host-heap-MB")
		b.ReportMetric(float64(rss)/float64(len(pids))/(1<<20), "interp-RSS-MB")
		r.Close()
		failed.Range(func(k, v any) bool { b.Errorf("cell %v failed: %v", k, v); return false })
	}
}

func vmRSS(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// BenchmarkWarmRoundTrip is one 1+1 cell through the registry on a warm
// session: the cost sessions adds over host.Execute.
func BenchmarkWarmRoundTrip(b *testing.B) {
	leakcheck.Check(b, leaks)
	r := New(Config{Home: b.TempDir()})
	defer r.Close()
	req := Request{Cells: []Cell{{Language: LangPython, Code: "1+1"}}}
	r.Eval(context.Background(), req, nil)
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		t := time.Now()
		if res, err := r.Eval(context.Background(), req, nil); err != nil || res.Status != StatusOK {
			b.Fatalf("%v %v", res.Status, err)
		}
		lat = append(lat, time.Since(t))
	}
	reportPercentiles(b, lat)
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	sortDurations(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "p90-ms")
}
