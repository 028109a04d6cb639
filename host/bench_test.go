package host

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
)

// Every benchmark measures the host and its anchor in the same run and
// reports both and their ratio, because the machine is noisy.

func benchStart(b *testing.B) *Process {
	b.Helper()
	p, err := Start(context.Background(), pyOptions(b))
	if err != nil {
		b.Fatalf("start: %v", err)
	}
	b.Cleanup(func() { p.Close() })
	return p
}

// The machine is shared and often overloaded, so wall time mostly measures
// waiting for a core; CPU time (user+sys) is reported beside it.

// procCPU returns the CPU time pid has used, from /proc/<pid>/stat.
func procCPU(b *testing.B, pid int) time.Duration {
	b.Helper()
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		b.Fatal(err)
	}
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	ut, _ := strconv.ParseInt(f[11], 10, 64) // field 14 of stat
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

// selfCPU returns the CPU time of this process (the host side).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// hostCPU runs fn and returns the CPU it cost the runner and the host.
func hostCPU(b *testing.B, p *Process, fn func()) time.Duration {
	r0, s0 := procCPU(b, p.Pid()), selfCPU()
	fn()
	return procCPU(b, p.Pid()) - r0 + selfCPU() - s0
}

// bareCPU runs python -c code with stdout on /dev/null and returns its CPU time.
func bareCPU(b *testing.B, code string) time.Duration {
	b.Helper()
	cmd := exec.Command(python(b), "-c", code)
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	cmd.Stdout = null
	if err := cmd.Run(); err != nil {
		b.Fatal(err)
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// bare runs python -c code with stdout and stderr on /dev/null.
func bare(b *testing.B, code string) time.Duration {
	b.Helper()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	cmd := exec.Command(python(b), "-c", code)
	cmd.Stdout, cmd.Stderr = null, null
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s -c %q: %v", python(b), code, err)
	}
	return time.Since(start)
}

// timed wraps code so that the interpreter times it and writes the seconds
// to stderr: the bulk anchors then leave out the interpreter's start, as the
// host's own figure (one Execute on a running runner) does.
func timed(code string) string {
	return "import time as _t, os as _os\n_t0 = _t.perf_counter()\n" + code +
		"\n_os.write(2, repr(_t.perf_counter() - _t0).encode())"
}

// runTimed runs cmd, whose stderr carries what timed wrote, and returns it.
func runTimed(b *testing.B, cmd *exec.Cmd, drain func()) time.Duration {
	b.Helper()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	if drain != nil {
		drain()
	}
	if err := cmd.Wait(); err != nil {
		b.Fatalf("%v: %v: %s", cmd.Args, err, stderr.String())
	}
	sec, err := strconv.ParseFloat(strings.TrimSpace(stderr.String()), 64)
	if err != nil {
		b.Fatalf("%v: no timing on stderr: %q", cmd.Args, stderr.String())
	}
	return time.Duration(sec * float64(time.Second))
}

// writeToNull is the interpreter's own cost of writing code's output to
// /dev/null.
func writeToNull(b *testing.B, code string) time.Duration {
	b.Helper()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	cmd := exec.Command(python(b), "-c", timed(code))
	cmd.Stdout = null
	return runTimed(b, cmd, nil)
}

// writeToCat is the cost of the same bytes crossing a default pipe to cat.
func writeToCat(b *testing.B, code string) time.Duration {
	b.Helper()
	cmd := exec.Command("sh", "-c", `"$0" -c "$1" | cat > /dev/null`, python(b), timed(code))
	return runTimed(b, cmd, nil)
}

// writeToDrain is the cost of the same bytes crossing a pipe of the host's
// size to a bare loop that does nothing with them: the floor for any reader
// of that pipe.
func writeToDrain(b *testing.B, code string) time.Duration {
	b.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	growPipe(w)
	cmd := exec.Command(python(b), "-c", timed(code))
	cmd.Stdout = w
	return runTimed(b, cmd, func() {
		w.Close()
		buf := make([]byte, readSize)
		for {
			if _, err := r.Read(buf); err != nil {
				return
			}
		}
	})
}

func hostRun(b *testing.B, p *Process, code string, emit func(frames.Frame)) time.Duration {
	b.Helper()
	start := time.Now()
	done, err := p.Execute(context.Background(), frames.Request{Code: code}, emit)
	el := time.Since(start)
	if err != nil || done.Status != frames.StatusOK {
		b.Fatalf("execute: %+v %v", done, err)
	}
	return el
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func BenchmarkColdStart(b *testing.B) {
	o := pyOptions(b)
	var host, pass []time.Duration
	for b.Loop() {
		start := time.Now()
		p, err := Start(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		host = append(host, time.Since(start))
		p.Close()
		pass = append(pass, bare(b, "pass"))
	}
	h, c := median(host), median(pass)
	b.ReportMetric(ms(h), "host-ms")
	b.ReportMetric(ms(c), "python-c-pass-ms")
	b.ReportMetric(float64(h)/float64(c), "ratio")
}

func BenchmarkRoundTrip(b *testing.B) {
	p := benchStart(b)
	var lat []time.Duration
	for b.Loop() {
		lat = append(lat, hostRun(b, p, "1+1", func(frames.Frame) {}))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2])/1e3, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100])/1e3, "p99-µs")
}

const bulkCode = `import sys
b = 'x' * 65535 + '\n'
w = sys.stdout.write
for _ in range(%d):
    w(b)
sys.stdout.flush()`

func BenchmarkBulkOutput(b *testing.B) {
	const writes = 3200 // 200 MiB in 64 KiB writes
	code := strings.Replace(bulkCode, "%d", strconv.Itoa(writes), 1)
	p := benchStart(b)
	var host, null, pipe, drain, hostC, runnerC time.Duration
	for b.Loop() {
		n := 0
		r0, s0 := procCPU(b, p.Pid()), selfCPU()
		host += hostRun(b, p, code, func(f frames.Frame) { n += len(f.Data) })
		runnerC += procCPU(b, p.Pid()) - r0
		hostC += selfCPU() - s0
		if n != writes<<16 {
			b.Fatalf("got %d bytes, want %d", n, writes<<16)
		}
		null += writeToNull(b, code)
		pipe += writeToCat(b, code)
		drain += writeToDrain(b, code)
	}
	mb := float64(writes<<16) / 1e6 * float64(b.N)
	b.ReportMetric(mb/host.Seconds(), "host-MB/s")
	b.ReportMetric(mb/null.Seconds(), "devnull-MB/s")
	b.ReportMetric(mb/pipe.Seconds(), "pipe-cat-MB/s")
	b.ReportMetric(mb/drain.Seconds(), "pipe-drain-MB/s")
	b.ReportMetric(float64(host)/float64(null), "ratio-devnull")
	b.ReportMetric(float64(host)/float64(pipe), "ratio-pipe")
	b.ReportMetric(float64(host)/float64(drain), "ratio-drain")
	// Where the host's time goes: its own CPU and the runner's, per MB.
	b.ReportMetric(float64(hostC.Microseconds())/mb, "host-cpu-µs/MB")
	b.ReportMetric(float64(runnerC.Microseconds())/mb, "runner-cpu-µs/MB")
	if rss, err := p.RSS(); err == nil {
		b.ReportMetric(float64(rss)/1e6, "runner-rss-MB")
	}
}

func BenchmarkPrintLoop(b *testing.B) {
	const code = "for i in range(300000): print(i)"
	p := benchStart(b)
	var host, null, hostC, nullC time.Duration
	for b.Loop() {
		hostC += hostCPU(b, p, func() { host += hostRun(b, p, code, func(frames.Frame) {}) })
		null += writeToNull(b, code)
		nullC += bareCPU(b, code)
	}
	b.ReportMetric(ms(hostC)/float64(b.N), "host-cpu-ms")
	b.ReportMetric(ms(nullC)/float64(b.N), "devnull-cpu-ms")
	b.ReportMetric(float64(hostC)/float64(nullC), "cpu-ratio")
	b.ReportMetric(ms(host)/float64(b.N), "host-ms")
	b.ReportMetric(ms(null)/float64(b.N), "devnull-ms")
	b.ReportMetric(float64(host)/float64(null), "ratio")
}

// BenchmarkInterleavedStreams: a cell whose stdout and stderr lines
// alternate, as a program that logs to stderr while it prints does. Each
// line on one stream was held behind a position mark of the other's, and
// every release scanned all that was held: 20,000 pairs took 18 s through
// run --json, 80,000 minutes (python3 to /dev/null: 0.06 s).
func BenchmarkInterleavedStreams(b *testing.B) {
	const code = "import sys\nfor i in range(20000):\n    print('out', i)\n    print('err', i, file=sys.stderr)"
	p := benchStart(b)
	var host time.Duration
	for b.Loop() {
		lines := 0
		host += hostRun(b, p, code, func(f frames.Frame) { lines += strings.Count(f.Data, "\n") })
		if lines != 40000 {
			b.Fatalf("%d lines, want 40000", lines)
		}
	}
	b.ReportMetric(ms(host)/float64(b.N), "host-ms")
}

// BenchmarkInterrupt measures Interrupt (sent once the cell has started) to
// Execute's return with the cancelled done.
func BenchmarkInterrupt(b *testing.B) {
	p := benchStart(b)
	var lat []time.Duration
	for b.Loop() {
		var sent time.Time
		done, err := p.Execute(context.Background(), frames.Request{Code: "import time\ntime.sleep(30)"}, func(f frames.Frame) {
			if f.Type == frames.TypeStarted {
				sent = time.Now()
				if err := p.Interrupt(); err != nil {
					b.Error(err)
				}
			}
		})
		lat = append(lat, time.Since(sent))
		if err != nil || !done.Cancelled {
			b.Fatalf("done = %+v, err = %v", done, err)
		}
	}
	b.ReportMetric(ms(median(lat)), "interrupt-to-done-ms")
}

// BenchmarkDeathNoticed measures from the cell's last act before os._exit
// (a timestamp it prints) to Execute returning the DeathError.
func BenchmarkDeathNoticed(b *testing.B) {
	o := pyOptions(b)
	var lat []time.Duration
	for b.Loop() {
		b.StopTimer()
		p, err := Start(context.Background(), o)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		var out strings.Builder
		_, err = p.Execute(context.Background(), frames.Request{Code: "import os, time\nos.write(1, b'%d\\n' % time.time_ns())\nos._exit(3)"},
			func(f frames.Frame) { out.WriteString(f.Data) })
		end := time.Now()
		if err == nil {
			b.Fatal("no death reported")
		}
		ns, perr := strconv.ParseInt(strings.TrimSpace(out.String()), 10, 64)
		if perr != nil {
			b.Fatalf("timestamp %q: %v", out.String(), perr)
		}
		lat = append(lat, end.Sub(time.Unix(0, ns)))
		p.Close()
	}
	b.ReportMetric(ms(median(lat)), "death-noticed-ms")
}
