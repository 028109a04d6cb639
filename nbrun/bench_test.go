package nbrun

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/notebook"
	"github.com/evalhost/evalhost/sessions"
)

// BenchmarkRunSaves is the notebook side of `nb run` on a notebook of N
// print cells: each cell's frames recorded as Run records them, then the
// notebook saved as nb run's progress save does it (lock, SaveUnsynced,
// unlock), and a final Save. It leaves out the interpreter. With
// papermill=false it is the run before papermill's metadata (every cell
// marked pending up front) made every cell change; compare the two. With
// startsave the notebook is saved as each cell starts instead, which save
// holds the end of the cell before, as nb run does with papermill's
// metadata (papermill's cell_start saves; its end saves are left to them).
func BenchmarkRunSaves(b *testing.B) {
	for _, n := range []int{200, 1000, 3000} {
		for _, mode := range []struct{ pm, startSave bool }{{false, false}, {true, false}, {true, true}} {
			b.Run(fmt.Sprintf("cells=%d/papermill=%t/startsave=%t", n, mode.pm, mode.startSave), func(b *testing.B) {
				benchRunSaves(b, n, mode.pm, mode.startSave)
			})
		}
	}
}

func benchRunSaves(b *testing.B, n int, papermill, startSave bool) {
	src := notebook.New()
	cells := make([]int, n)
	for i := range n {
		src.Insert(i, notebook.Code, "print("+strconv.Itoa(i)+")")
		cells[i] = i
	}
	data := src.Bytes()
	path := filepath.Join(b.TempDir(), "run.ipynb")
	var written int
	for b.Loop() {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			b.Fatal(err)
		}
		nb, err := notebook.Load(path)
		if err != nil {
			b.Fatal(err)
		}
		run := &runState{nb: nb, rec: NewRecorder(nb), cells: cells, current: -1}
		run.onCellEnd = func(int, sessions.CellResult) { lockedSave(b, path, nb.SaveUnsynced) }
		if startSave {
			run.onCellEnd = func(int, sessions.CellResult) {}
			run.onCellStart = func(int) { lockedSave(b, path, nb.SaveUnsynced) }
		}
		if papermill {
			if run.pm, err = startPapermill(&Papermill{InputPath: path, OutputPath: path, Version: "bench"}, nb, cells, true, false); err != nil {
				b.Fatal(err)
			}
		}
		for k := range cells {
			run.emit(k, frames.Frame{Type: frames.TypeStarted})
			run.emit(k, frames.Frame{Type: frames.TypeStdout, Data: strconv.Itoa(k) + "\n"})
			run.emit(k, frames.Frame{Type: frames.TypeDone, Status: frames.StatusOK, ExecutionCount: k + 1})
			run.cellEnd(sessions.CellResult{Index: k, Status: sessions.StatusOK, ExecutionCount: k + 1})
		}
		run.rec.Flush()
		if run.pm != nil {
			run.keep(run.pm.finish())
		}
		if run.err != nil {
			b.Fatal(run.err)
		}
		lockedSave(b, path, nb.Save)
		written = len(nb.Bytes())
	}
	b.ReportMetric(float64(written), "file-bytes")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/cell")
}

func lockedSave(b *testing.B, path string, save func(string) error) {
	lk, err := notebook.Lock(b.Context(), path)
	if err != nil {
		b.Fatal(err)
	}
	defer lk.Unlock()
	if err := save(path); err != nil {
		b.Fatal(err)
	}
}
