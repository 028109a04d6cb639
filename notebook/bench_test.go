package notebook

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// bigNotebook builds n cells: two code cells with outputs for each markdown
// cell, sources of a few lines.
func bigNotebook(tb testing.TB, n int) []byte {
	nb := New()
	for i := 0; i < n; i++ {
		if i%3 == 2 {
			nb.Insert(i, Markdown, fmt.Sprintf("## Section %d\n\nSome prose about step %d, with *emphasis*.\n", i, i))
			continue
		}
		nb.Insert(i, Code, fmt.Sprintf("import math\nx_%d = math.sqrt(%d)\nprint(x_%d)\nx_%d * 2", i, i, i, i))
		result, err := ExecuteResult(map[string]json.RawMessage{"text/plain": []byte(`"` + strconv.Itoa(2*i) + `.0"`)}, nil, i+1)
		if err != nil {
			tb.Fatal(err)
		}
		nb.SetOutputs(i, []Output{StreamOutput("stdout", fmt.Sprintf("%d.0\n", i)), result})
		nb.SetExecutionCount(i, i+1)
	}
	return nb.Bytes()
}

// BenchmarkViewApply5000 loads a 5,000-cell notebook, renders its text view,
// applies the text back and serialises it: one agent edit round. It also
// reports nbformat's own reads+writes of the same file (nbformat-ns/op) and
// the ratio, measured in the same run; target: ours <= 100 ms.
func BenchmarkViewApply5000(b *testing.B) {
	data := bigNotebook(b, 5000)
	b.SetBytes(int64(len(data)))
	pyNs := nbformatReadWriteNs(b, data)
	b.ResetTimer()
	for b.Loop() {
		nb, err := Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		out, err := nb.ApplyText(nb.Text())
		if err != nil {
			b.Fatal(err)
		}
		if len(out.Bytes()) != len(data) {
			b.Fatal("round trip changed the size")
		}
	}
	if pyNs > 0 {
		ours := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(pyNs, "nbformat-ns/op")
		b.ReportMetric(pyNs/ours, "x-faster-than-nbformat")
	}
}

// nbformatReadWriteNs times nbformat.reads + nbformat.writes of data in
// Python (best of 3), or 0 when nbformat is missing.
func nbformatReadWriteNs(b *testing.B, data []byte) float64 {
	if exec.Command("python3", "-c", "import nbformat").Run() != nil {
		return 0
	}
	path := filepath.Join(b.TempDir(), "big.ipynb")
	os.WriteFile(path, data, 0o644)
	const script = `
import sys, time, nbformat
s = open(sys.argv[1], encoding="utf-8").read()
best = 1e9
for _ in range(3):
    t = time.perf_counter()
    nbformat.writes(nbformat.reads(s, as_version=4))
    best = min(best, time.perf_counter() - t)
print(best * 1e9)
`
	out, err := exec.Command("python3", "-c", script, path).Output()
	if err != nil {
		return 0
	}
	ns, _ := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	return ns
}

// BenchmarkLockedEdit5000 is one `nb edit` of a 5,000-cell notebook on
// disk: lock, load, edit a cell, save (with the check that the file is
// unchanged, which reads and hashes it again), unlock.
func BenchmarkLockedEdit5000(b *testing.B) {
	data := bigNotebook(b, 5000)
	path := filepath.Join(b.TempDir(), "big.ipynb")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for i := 0; b.Loop(); i++ {
		lk, err := Lock(b.Context(), path)
		if err != nil {
			b.Fatal(err)
		}
		nb, err := Load(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := nb.Edit(0, strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
		if err := nb.Save(path); err != nil {
			b.Fatal(err)
		}
		if err := lk.Unlock(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPerCellSaves is nb run's pattern on an N-cell notebook: every
// cell's metadata is set up front (as papermill's "pending"), then each cell
// in turn gets outputs, an execution count and new metadata and the
// notebook is saved (SaveUnsynced). Only one cell changes between saves, so
// a save should cost the file's write, not an encoding of every cell.
func BenchmarkPerCellSaves(b *testing.B) {
	for _, n := range []int{1000, 3000} {
		b.Run(fmt.Sprintf("cells=%d", n), func(b *testing.B) {
			src := New()
			for i := range n {
				src.Insert(i, Code, "print("+strconv.Itoa(i)+")")
			}
			data := src.Bytes()
			path := filepath.Join(b.TempDir(), "run.ipynb")
			for b.Loop() {
				if err := os.WriteFile(path, data, 0o644); err != nil {
					b.Fatal(err)
				}
				nb, err := Load(path)
				if err != nil {
					b.Fatal(err)
				}
				for i := range n {
					nb.SetCellMetadata(i, "papermill", map[string]any{"status": "pending", "duration": nil})
				}
				for i := range n {
					nb.SetOutputs(i, []Output{StreamOutput("stdout", strconv.Itoa(i)+"\n")})
					nb.SetExecutionCount(i, i+1)
					nb.SetCellMetadata(i, "papermill", map[string]any{"status": "completed", "duration": 0.25})
					if err := nb.SaveUnsynced(path); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/save")
		})
	}
}

// BenchmarkBytesOneCellChanged is Bytes of an N-cell notebook after one
// cell changed: what a progress save encodes, without the file system.
func BenchmarkBytesOneCellChanged(b *testing.B) {
	for _, n := range []int{1000, 3000} {
		b.Run(fmt.Sprintf("cells=%d", n), func(b *testing.B) {
			nb := mustParse(b, bigNotebook(b, n))
			nb.Bytes()
			for i := 0; b.Loop(); i++ {
				nb.SetCellMetadata(i%n, "papermill", map[string]any{"status": "completed", "n": i})
				nb.Bytes()
			}
		})
	}
}

// BenchmarkProgressSaveParts splits nb run's progress save of a ~95 KB
// notebook (Lock, SaveUnsynced, Unlock) into its parts. On ext4 the
// rename dominates: replacing the old file frees its blocks, written back
// by then; the lock file made and removed per Lock comes next.
func BenchmarkProgressSaveParts(b *testing.B) {
	data := bigNotebook(b, 230)
	path := filepath.Join(b.TempDir(), "n.ipynb")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	nb, err := Load(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("whole", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			lk, err := Lock(b.Context(), path)
			if err != nil {
				b.Fatal(err)
			}
			nb.SetExecutionCount(0, i)
			if err := nb.SaveUnsynced(path); err != nil {
				b.Fatal(err)
			}
			lk.Unlock()
		}
	})
	b.Run("lock+unlock", func(b *testing.B) {
		for b.Loop() {
			lk, err := Lock(b.Context(), path)
			if err != nil {
				b.Fatal(err)
			}
			lk.Unlock()
		}
	})
	b.Run("sweep", func(b *testing.B) {
		for b.Loop() {
			sweepTemps(canonical(path))
		}
	})
	b.Run("encode", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			nb.SetExecutionCount(0, i)
			nb.encode()
		}
	})
	b.Run("check", func(b *testing.B) {
		for b.Loop() {
			if err := checkHolds(path, &nb.held); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("temp file", func(b *testing.B) {
		for b.Loop() {
			f, err := createTemp(path)
			if err != nil {
				b.Fatal(err)
			}
			f.Write(data)
			f.Close()
			os.Remove(f.Name())
		}
	})
}
