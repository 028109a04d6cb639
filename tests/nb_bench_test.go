package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/testkit"
)

// BenchmarkNotebookRun50 executes a 50-cell notebook with `evalhost nb run`
// and with nbclient + ipykernel (nbconvert --execute's engine), alternately
// in one run; both include starting the interpreter.
func BenchmarkNotebookRun50(b *testing.B) { benchNotebookRun(b, 50) }

// BenchmarkNotebookRun200 is the batch case: 200 cells, each written to
// the output as it ends (under the notebook's lock, unsynced), against
// nbclient in the same run.
func BenchmarkNotebookRun200(b *testing.B) { benchNotebookRun(b, 200) }

func benchNotebookRun(b *testing.B, n int) {
	testkit.NeedModuleIn(b, "python3", "nbclient, ipykernel", "nbclient ipykernel")
	dir := b.TempDir()
	in := filepath.Join(dir, "bench.ipynb")
	var cells []string
	for i := range n {
		cells = append(cells, fmt.Sprintf("x%d = sum(range(%d))\nprint('cell', %d, x%d)", i, i*1000, i, i))
	}
	writeNotebook(b, in, cells...)
	home := b.TempDir()
	var ours, theirs time.Duration
	for b.Loop() {
		t := time.Now()
		cmd := exec.Command(binary, "nb", "run", in, "-o", filepath.Join(dir, "ours.ipynb"))
		cmd.Env = append(os.Environ(), "EVALHOST_HOME="+home)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("nb run: %v\n%s", err, out)
		}
		ours += time.Since(t)
		t = time.Now()
		if out, err := exec.Command("python3", "testdata/nbclient_run.py", in, filepath.Join(dir, "theirs.ipynb")).CombinedOutput(); err != nil {
			b.Fatalf("nbclient: %v\n%s", err, out)
		}
		theirs += time.Since(t)
	}
	runs := float64(b.N)
	b.ReportMetric(ours.Seconds()*1000/runs, "evalhost-ms")
	b.ReportMetric(theirs.Seconds()*1000/runs, "nbclient-ms")
	b.ReportMetric(theirs.Seconds()/ours.Seconds(), "speedup")
}
