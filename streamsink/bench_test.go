package streamsink

import (
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
)

const benchChunk = 64 << 10

func asciiChunk() []byte {
	line := "2024-01-01 12:00:00 INFO processing item with a reasonably long log message\n"
	return []byte(strings.Repeat(line, benchChunk/len(line)+1)[:benchChunk])
}

func mixedChunk() []byte {
	return chunkSource(benchChunk)(0)
}

func utf8Chunk() []byte {
	line := "naïve café — 日本語のテキスト, emoji 🎉, ascii words here\n"
	return []byte(strings.Repeat(line, benchChunk/len(line)+1)[:benchChunk])
}

// BenchmarkAnchorCopy is the memory-bandwidth anchor: copying the chunk.
func BenchmarkAnchorCopy(b *testing.B) {
	src := asciiChunk()
	dst := make([]byte, len(src))
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		copy(dst, src)
	}
}

func BenchmarkSink(b *testing.B) {
	inputs := []struct {
		name  string
		chunk []byte
	}{
		{"ascii", asciiChunk()},
		{"utf8", utf8Chunk()},
		{"mixed-ansi-cr", mixedChunk()},
		{"64k-line", []byte(strings.Repeat("x", benchChunk-1) + "\n")}, // issue 16's bulk output
	}
	for _, in := range inputs {
		for _, store := range []bool{false, true} {
			for _, api := range []string{"Append", "Write", "Frame"} {
				name := in.name + "/" + api
				if store {
					name += "/store"
				}
				b.Run(name, func(b *testing.B) {
					o := Options{}
					if store {
						o.Store = NewStore(benchDir(b))
					}
					s, _ := New(o)
					defer s.Close()
					data := string(in.chunk)
					var dst []byte
					b.SetBytes(int64(len(in.chunk)))
					for b.Loop() {
						switch api {
						case "Append":
							dst = s.Append(dst[:0], frames.TypeStdout, in.chunk)
						case "Write":
							_ = s.Write(frames.TypeStdout, in.chunk)
						case "Frame":
							_ = s.Frame(frames.Frame{Type: frames.TypeStdout, Data: data})
						}
					}
				})
			}
		}
	}
}

// BenchmarkPythonOutput reads 64 MiB that a real Python prints, through the
// sink (with a store) and without it: the ratio is the sink's cost end to
// end on the host side.
func BenchmarkPythonOutput(b *testing.B) {
	const mb = 64
	code := "import sys\nb = ('x' * 99 + '\\n').encode() * 655\nw = sys.stdout.buffer.write\nfor _ in range(" +
		strconv.Itoa(mb<<20/len64k) + "):\n    w(b)\n"
	for _, on := range []bool{false, true} {
		name := "sink-off"
		if on {
			name = "sink-on"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(mb << 20)
			buf := make([]byte, benchChunk)
			for b.Loop() {
				cmd := exec.Command("python3", "-I", "-S", "-c", code)
				out, err := cmd.StdoutPipe()
				if err != nil {
					b.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				var s *Sink
				if on {
					s, _ = New(Options{Store: NewStore(benchDir(b))})
				}
				n := pump(out, buf, s)
				cmd.Wait()
				if s != nil {
					s.Close()
				}
				if n < mb<<20-len64k {
					b.Fatalf("read %d bytes", n)
				}
			}
		})
	}
}

const len64k = 655 * 100

func pump(r io.Reader, buf []byte, s *Sink) int {
	total := 0
	var dst []byte
	for {
		n, err := r.Read(buf)
		total += n
		if s != nil && n > 0 {
			dst = s.Append(dst[:0], frames.TypeStdout, buf[:n])
		} else {
			dst = append(dst[:0], buf[:n]...) // what forwarding costs anyway
		}
		if err != nil {
			return total
		}
	}
}

// benchDir is a store directory on tmpfs when there is one, so that store
// benchmarks measure the sink and not the disk (which on a shared VM varies
// between 60 MB/s and 2 GB/s for fresh writes).
func benchDir(b *testing.B) string {
	dir, err := os.MkdirTemp("/dev/shm", "streamsink-bench-")
	if err != nil {
		return b.TempDir()
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
