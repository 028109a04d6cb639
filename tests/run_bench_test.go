package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// bulkCode prints 200 MiB in 64 KiB writes (issue 16).
const (
	bulkCode  = "import sys\ns = 'x' * 65535 + '\\n'\nfor _ in range(3200): sys.stdout.write(s)"
	bulkBytes = 3200 << 16
)

// BenchmarkRunBulkOutput pipes 200 MiB from a cell through `evalhost run`
// into `wc -c`, beside the same code run by `python3 -c` (the PATH's, a
// version-manager shim here, as a user types it) and by the interpreter
// that evalhost resolves (the same binary, no shim), alternately in one run.
// Whole processes, each behind the same `sh -c '… | wc -c'`; the figures are
// medians, and the ratios are evalhost's median over each anchor's, of
// wall time and (less disturbed by a busy machine) of the pipeline's CPU.
// Every run must count all bytes and leave the artifacts directory empty.
func BenchmarkRunBulkOutput(b *testing.B) {
	exe, err := exec.LookPath("python3")
	if err != nil {
		b.Skip("python3 not on PATH")
	}
	out, err := exec.Command(exe, "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		b.Fatal(err)
	}
	resolved := strings.TrimSpace(string(out))
	home := b.TempDir()
	env := append(os.Environ(), "EVALHOST_HOME="+home, "PI_ARTIFACTS_DIR=")
	// pipeline returns the wall time and the CPU time of the whole pipeline
	// (sh waits for both sides, so its children's CPU is in its own).
	pipeline := func(want int, args ...string) (wall, cpu time.Duration) {
		b.Helper()
		cmd := exec.Command("sh", append([]string{"-c", `"$@" | wc -c`, "sh"}, args...)...)
		cmd.Env = env
		t := time.Now()
		got, err := cmd.Output()
		wall = time.Since(t)
		if err != nil {
			b.Fatalf("%s: %v", args[0], err)
		}
		if n, _ := strconv.Atoi(strings.TrimSpace(string(got))); n != want {
			b.Fatalf("%s printed %s bytes, want %d", args[0], got, want)
		}
		return wall, cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	// The last, `run -c pass`, is evalhost's start and end alone: what of
	// its time is not moving output.
	var wall, cpu [4][]time.Duration // evalhost, python3, resolved, evalhost's start
	for b.Loop() {
		for i, args := range [][]string{{binary, "run", "-c", bulkCode}, {"python3", "-c", bulkCode}, {resolved, "-c", bulkCode},
			{binary, "run", "-c", "pass"}} {
			want := bulkBytes
			if i == 3 {
				want = 0
			}
			w, c := pipeline(want, args...)
			wall[i], cpu[i] = append(wall[i], w), append(cpu[i], c)
		}
		if left, _ := filepath.Glob(filepath.Join(home, "artifacts", "*")); len(left) > 0 {
			b.Fatalf("run left %v in the artifacts directory", left)
		}
	}
	for _, m := range []struct {
		unit string
		d    [4][]time.Duration
	}{{"", wall}, {"cpu-", cpu}} {
		o, s, r := medianDuration(m.d[0]), medianDuration(m.d[1]), medianDuration(m.d[2])
		b.ReportMetric(millis(o), "evalhost-"+m.unit+"ms")
		b.ReportMetric(millis(medianDuration(m.d[3])), "evalhost-pass-"+m.unit+"ms")
		b.ReportMetric(millis(s), "python3-"+m.unit+"ms")
		b.ReportMetric(millis(r), "resolved-"+m.unit+"ms")
		b.ReportMetric(float64(o)/float64(s), m.unit+"ratio-python3")
		b.ReportMetric(float64(o)/float64(r), m.unit+"ratio-resolved")
	}
}

func medianDuration(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
