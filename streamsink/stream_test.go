package streamsink

import (
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"runtime"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

// chunkSource makes a deterministic stream of mixed output: plain lines,
// coloured lines, UTF-8, progress bars; every chunk differs.
func chunkSource(size int) func(n int) []byte {
	buf := make([]byte, 0, size+256)
	return func(n int) []byte {
		buf = buf[:0]
		for i := 0; len(buf) < size; i++ {
			switch i % 4 {
			case 0:
				buf = fmt.Appendf(buf, "chunk %d line %d: the quick brown fox\n", n, i)
			case 1:
				buf = fmt.Appendf(buf, "\x1b[32mok\x1b[0m é€𝄞 %d\n", i)
			case 2:
				buf = fmt.Appendf(buf, "%3d%%\r", i%100)
			default:
				buf = append(buf, "plain ascii text that is long enough to matter\n"...)
			}
		}
		return buf[:size]
	}
}

// TestGigabyteStream pushes 1 GiB (64 MiB with -short) through a sink with
// a store: the heap stays flat and the artifact is the input, byte for
// byte.
func TestGigabyteStream(t *testing.T) {
	total := 1 << 30
	if testing.Short() {
		total = 64 << 20
	}
	const chunk = 64 << 10
	s := newSink(t, Options{Store: NewStore(t.TempDir())})
	next := chunkSource(chunk)
	in := sha256.New()

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapInuse, ms.HeapInuse
	for n := 0; n*chunk < total; n++ {
		p := next(n)
		in.Write(p)
		s.Write(frames.TypeStdout, p)
		if n%256 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
	}
	d := closeDump(t, s)
	growth := int64(peak) - int64(base)
	t.Logf("%d MiB streamed; heap in use %d KiB before, peak %d KiB (+%d KiB)",
		total>>20, base>>10, peak>>10, growth>>10)
	if growth > 16<<20 {
		t.Errorf("heap grew by %d KiB while streaming; it must stay flat", growth>>10)
	}
	if d.TotalBytes != int64(total) || !d.Truncated || d.KeptBytes > DefaultMaxBytes {
		t.Errorf("dump totals %d bytes, truncated %v, kept %d", d.TotalBytes, d.Truncated, d.KeptBytes)
	}
	f, err := os.Open(d.ArtifactPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := sha256.New()
	if _, err := io.Copy(out, f); err != nil {
		t.Fatal(err)
	}
	if got, want := out.Sum(nil), in.Sum(nil); string(got) != string(want) {
		t.Errorf("artifact sha256 %x, input %x", got, want)
	}
}
