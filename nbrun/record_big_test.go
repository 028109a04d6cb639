package nbrun

import (
	"runtime"
	"strings"
	"testing"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/notebook"
)

// A cell that prints a lot is held once: 32 MiB of prints in 64 KiB
// frames (100-byte lines), recorded, flushed at its done, at its end and
// as the next cell starts, allocate less than four times the text (a
// line's value costs about 90 bytes: 2.4 times here, 18 before). A cell
// that printed 300 MB was held in a buffer grown by copies, then as
// lines, rebuilt at every flush (2.6 GB allocated, 3.6 GB resident).
func TestRecorderBigStreamHeldOnce(t *testing.T) {
	const size, chunk = 32 << 20, 64 << 10
	nb := notebook.New()
	for i := range 2 {
		if err := nb.Insert(i, notebook.Code, "print()"); err != nil {
			t.Fatal(err)
		}
	}
	piece := strings.Repeat("y", 99) + "\n"
	data := strings.Repeat(piece, chunk/len(piece)+1)[:chunk]
	rec := NewRecorder(nb)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := rec.Start(0); err != nil {
		t.Fatal(err)
	}
	for range size / chunk {
		if err := rec.Add(frames.Frame{Type: frames.TypeStdout, Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	rec.Add(done(1))
	rec.Flush() // as a cell's end flushes
	first := nb.Outputs(0)
	if err := rec.Start(1); err != nil {
		t.Fatal(err)
	}
	rec.Add(out("small\n"))
	rec.Add(done(2))
	rec.Flush()
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 4*size {
		t.Errorf("recording %d MiB of prints allocated %d MiB; want under four times the text", size>>20, got>>20)
	}
	// A cell flushed again unchanged keeps its outputs, so a save finds
	// its encoding cached and does not encode 32 MiB again.
	if again := nb.Outputs(0); len(again) != 1 || again[0] != first[0] {
		t.Errorf("cell 0's output was rebuilt after the cell ended")
	}
	if got := len(nb.Outputs(0)[0].Text()); got != size {
		t.Errorf("cell 0 holds %d bytes of text, want %d", got, size)
	}
}
