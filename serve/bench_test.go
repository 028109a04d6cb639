package serve_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"testing"
	"time"

	"github.com/evalhost/evalhost/serve"
	"github.com/evalhost/evalhost/sessions"
)

// BenchmarkServeWarmRoundTrip is one `1+1` eval on a warm session through
// Serve over OS pipes, as `evalhost serve` runs: the client writes a line
// and reads up to the end line. Profile it with -cpuprofile, -memprofile
// or -trace to see serve's own share of a round trip.
func BenchmarkServeWarmRoundTrip(b *testing.B) {
	if _, err := exec.LookPath("python3"); err != nil {
		b.Skip("python3 not on PATH")
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	srv := serve.New(serve.Config{Sessions: sessions.Config{Home: b.TempDir()}})
	served := make(chan error, 1)
	go func() {
		served <- srv.Serve(context.Background(), inR, outW)
		outW.Close()
	}()
	br := bufio.NewReader(outR)
	if _, err := br.ReadBytes('\n'); err != nil { // hello
		b.Fatal(err)
	}
	n := 0
	eval := func() {
		n++
		fmt.Fprintf(inW, `{"op":"eval","id":"b%d","session":"w","cells":[{"language":"py","code":"1+1"}]}`+"\n", n)
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				b.Fatal(err)
			}
			if bytes.Contains(line, []byte(`"type":"end"`)) {
				if !bytes.Contains(line, []byte(`"status":"ok"`)) {
					b.Fatalf("end: %s", line)
				}
				return
			}
		}
	}
	eval()
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		t := time.Now()
		eval()
		lat = append(lat, time.Since(t))
	}
	b.StopTimer()
	inW.Close()
	if err := <-served; err != nil {
		b.Fatal(err)
	}
	inR.Close()
	outR.Close()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "p90-ms")
	}
}
