package gateway

import (
	"context"
	"encoding/json"
	"os/exec"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
)

// The benchmarks report medians in ms beside the anchor, jupyter_client
// talking over ZMQ to the same kernel (testdata/jupyter_client_bench.py),
// measured in the same run: compare the *_ratio metrics.

func median(ds []time.Duration) float64 {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return float64(ds[len(ds)/2]) / float64(time.Millisecond)
}

type anchor struct {
	RoundTrip float64 `json:"roundtrip_p50_ms"`
	Interrupt float64 `json:"interrupt_p50_ms"`
	Start     float64 `json:"start_ms"`
}

func jupyterClientAnchor(b *testing.B, kernelID string, n int) anchor {
	b.Helper()
	out, err := exec.Command(testPython, "testdata/jupyter_client_bench.py", kernelID, strconv.Itoa(n)).Output()
	if err != nil {
		b.Fatalf("jupyter_client anchor: %v", err)
	}
	var a anchor
	if err := json.Unmarshal(out, &a); err != nil {
		b.Fatalf("jupyter_client anchor printed %q: %v", out, err)
	}
	return a
}

func BenchmarkWarmRoundTrip(b *testing.B) {
	k := ownKernel(b, KernelOptions{})
	ctx := context.Background()
	times := make([]time.Duration, 0, b.N)
	nop := func(frames.Frame) {}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := time.Now()
		if _, err := k.Execute(ctx, frames.Request{ID: "b", Code: "1+1"}, nop); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(t))
	}
	b.StopTimer()
	a := jupyterClientAnchor(b, k.ID(), 200)
	p50 := median(times)
	b.ReportMetric(p50, "p50_ms")
	b.ReportMetric(a.RoundTrip, "jupyter_client_p50_ms")
	b.ReportMetric(p50/a.RoundTrip, "ratio")
}

func BenchmarkInterrupt(b *testing.B) {
	k := ownKernel(b, KernelOptions{})
	times := make([]time.Duration, 0, b.N)
	for i := 0; i < b.N; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		var at time.Time
		timer := time.AfterFunc(100*time.Millisecond, func() { at = time.Now(); cancel() })
		done, err := k.Execute(ctx, frames.Request{ID: "i", Code: "import time; time.sleep(30)"}, func(frames.Frame) {})
		timer.Stop()
		cancel()
		if err != nil || !done.Cancelled {
			b.Fatalf("interrupt: %+v, %v", done, err)
		}
		times = append(times, time.Since(at))
	}
	a := jupyterClientAnchor(b, k.ID(), 20)
	p50 := median(times)
	b.ReportMetric(p50, "p50_ms")
	b.ReportMetric(a.Interrupt, "jupyter_client_p50_ms")
	b.ReportMetric(p50/a.Interrupt, "ratio")
}

func BenchmarkKernelStart(b *testing.B) {
	c := testClient(b)
	times := make([]time.Duration, 0, b.N)
	var last *Kernel
	for i := 0; i < b.N; i++ {
		t := time.Now()
		k, err := c.StartKernel(context.Background(), KernelOptions{})
		if err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(t))
		if last != nil {
			_ = last.Close()
		}
		last = k
	}
	a := jupyterClientAnchor(b, last.ID(), 5)
	_ = last.Close()
	p50 := median(times)
	b.ReportMetric(p50, "p50_ms")
	b.ReportMetric(a.Start, "jupyter_client_start_ms")
	b.ReportMetric(p50/a.Start, "ratio")
}
