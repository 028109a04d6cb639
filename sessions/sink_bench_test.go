package sessions

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/host"
	"github.com/evalhost/evalhost/runner"
	"github.com/evalhost/evalhost/streamsink"
)

// printCell prints 64 MiB in 64 KiB writes.
const printCell = "import sys\nchunk = 'x' * 65535 + '\\n'\nfor _ in range(1024):\n    sys.stdout.write(chunk)"

// BenchmarkCellOutputSink compares a cell's printed-output throughput through
// the registry (every chunk sanitised, counted, spilled to an artifact) with
// the same cell through host.Execute alone, measured alternately in one run.
func BenchmarkCellOutputSink(b *testing.B) {
	py, err := exec.LookPath("python3")
	if err != nil {
		b.Skip("python3 not on PATH")
	}
	home := b.TempDir()
	r := New(Config{Home: home, Sink: streamsink.Options{Store: streamsink.NewStore(filepath.Join(home, "artifacts"))}})
	defer r.Close()
	interp, err := ResolveInterpreter(py, home, home, func(string) string { return "" }, 0)
	if err != nil {
		b.Fatal(err)
	}
	path, err := runner.Path(filepath.Join(home, "runner"))
	if err != nil {
		b.Fatal(err)
	}
	p, err := host.Start(context.Background(), host.Options{Python: interp.Path, Runner: path, Dir: home})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	const size = 64 << 20
	var on, off time.Duration
	for b.Loop() {
		t := time.Now()
		res, err := r.Eval(context.Background(), Request{Cwd: home, Cells: []Cell{{Language: LangPython, Code: printCell}}}, nil)
		if err != nil || res.Status != StatusOK || res.Cells[0].Output.TotalBytes != size {
			b.Fatalf("with sink: %v %+v", err, res)
		}
		on += time.Since(t)
		t = time.Now()
		n := 0
		if _, err := p.Execute(context.Background(), frames.Request{ID: "x", Code: printCell}, func(f frames.Frame) { n += len(f.Data) }); err != nil || n != size {
			b.Fatalf("host alone: %v, %d bytes", err, n)
		}
		off += time.Since(t)
	}
	mbps := func(d time.Duration) float64 { return float64(size) * float64(b.N) / d.Seconds() / 1e6 }
	b.ReportMetric(mbps(on), "sink-on-MB/s")
	b.ReportMetric(mbps(off), "sink-off-MB/s")
	b.ReportMetric(on.Seconds()/off.Seconds(), "on/off")
}
