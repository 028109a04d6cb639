package runner

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
)

// BenchmarkColdStart alternates `python -c pass` (the anchor) with the
// runner's start to ready, same binary, and reports both and their ratio.
func BenchmarkColdStart(b *testing.B) {
	exe := python(b)
	var bare, ready time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		bareCmd := exec.Command(exe, "-c", "pass")
		bareCmd.Env = benchEnv()
		if err := bareCmd.Run(); err != nil {
			b.Fatal(err)
		}
		bare += time.Since(t0)
		ready += startToReady(b, exe)
	}
	n := float64(b.N)
	b.ReportMetric(float64(bare.Microseconds())/n/1000, "bare-ms")
	b.ReportMetric(float64(ready.Microseconds())/n/1000, "ready-ms")
	b.ReportMetric(float64(ready)/float64(bare), "ratio")
}

// startToReady spawns the runner, times it to its ready line, then ends it.
func startToReady(b *testing.B, exe string) time.Duration {
	return startAt(b, exe, runnerPath)
}

// startAt times the runner at path from spawn to its ready line.
func startAt(b *testing.B, exe, path string) time.Duration {
	reqR, reqW := mustPipe(b)
	frR, frW := mustPipe(b)
	cmd := exec.Command(exe, path)
	cmd.Stdin = reqR
	cmd.ExtraFiles = []*os.File{frW}
	cmd.Env = append(benchEnv(), "EVALHOST_SYNC_NONCE=1")
	cmd.SysProcAttr = groupAttr()
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	reqR.Close()
	frW.Close()
	line, err := bufio.NewReader(frR).ReadString('\n')
	d := time.Since(t0)
	if err != nil || !strings.Contains(line, `"ready"`) {
		b.Fatalf("no ready: %q %v", line, err)
	}
	reqW.Close()
	frR.Close()
	if err := cmd.Wait(); err != nil {
		b.Fatalf("runner exit: %v", err)
	}
	return d
}

// BenchmarkRoundTrip is a warm `1+1` cell through the test harness:
// request, started, result, done and both sync marks.
func BenchmarkRoundTrip(b *testing.B) {
	p := start(b, startOpts{})
	for i := 0; i < 200; i++ {
		p.run("1+1")
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		c := p.run("1+1")
		lat = append(lat, time.Since(t0))
		if c.done().Status != "ok" {
			b.Fatalf("done %+v", c.done())
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1000, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1000, "p99-µs")
}

// BenchmarkFileCell is a one-line cell of a file (evalhost run FILE's
// cells), as its first line and as its 20,000th: the far one is compiled
// where it stands and moved (lineshift.py), not padded with 19,999 lines.
func BenchmarkFileCell(b *testing.B) {
	path := writeFile(b, b.TempDir(), "script.py", strings.Repeat("x = 1\n", 20000))
	for _, line := range []int{1, 20000} {
		b.Run(fmt.Sprintf("line %d", line), func(b *testing.B) {
			p := start(b, startOpts{})
			req := map[string]any{"code": "x = 1\n", "filename": path, "line": line}
			for i := 0; i < 50; i++ {
				p.runReq(req)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if c := p.runReq(req); c.done().Status != "ok" {
					b.Fatalf("done %+v", c.done())
				}
			}
		})
	}
}

// BenchmarkPrintLoop compares `for i in range(300000): print(i)` in a cell
// (to the harness over a pipe) with the same loop in a plain interpreter
// printing to /dev/null, timed inside that interpreter.
func BenchmarkPrintLoop(b *testing.B) {
	benchOutput(b, "for i in range(300000): print(i)")
}

// BenchmarkBulkOutput writes 200 MiB in 64 KiB writes, as issue 2 asks.
func BenchmarkBulkOutput(b *testing.B) {
	b.SetBytes(3200 << 16)
	benchOutput(b, "import sys\ns = 'x' * 65535 + '\\n'\nfor _ in range(3200): sys.stdout.write(s)")
}

func benchOutput(b *testing.B, loop string) {
	exe := python(b)
	p := start(b, startOpts{})
	p.out.discard = true
	var bare, cell time.Duration
	for i := 0; i < b.N; i++ {
		bare += timedInPython(b, exe, loop)
		t0 := time.Now()
		c := p.run(loop)
		cell += time.Since(t0)
		if c.done().Status != "ok" {
			b.Fatalf("done %+v", c.done())
		}
	}
	n := float64(b.N)
	b.ReportMetric(float64(bare.Microseconds())/n/1000, "devnull-ms")
	b.ReportMetric(float64(cell.Microseconds())/n/1000, "runner-ms")
	b.ReportMetric(float64(cell)/float64(bare), "ratio")
}

// timedInPython runs code in a plain interpreter with stdout on /dev/null
// and returns the time the code itself took.
func timedInPython(b *testing.B, exe, code string) time.Duration {
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer null.Close()
	script := "import sys, time\nt0 = time.perf_counter()\n" + code +
		"\nsys.stdout.flush()\nsys.stderr.write(repr(time.perf_counter() - t0))\n"
	cmd := exec.Command(exe, "-c", script)
	cmd.Env = benchEnv()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = null, &out
	if err := cmd.Run(); err != nil {
		b.Fatal(err)
	}
	secs, err := strconv.ParseFloat(strings.TrimSpace(out.String()), 64)
	if err != nil {
		b.Fatalf("timing %q: %v", out.String(), err)
	}
	return time.Duration(secs * float64(time.Second))
}

// benchEnv is the environment of both sides of a comparison, the one start
// gives the runner: no PYTHONUNBUFFERED or similar from the caller.
func benchEnv() []string {
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "LANG=C.UTF-8"}
}

// BenchmarkInterrupt times SIGINT to the process group during time.sleep
// until the cell's done frame (the design target is 20 ms).
func BenchmarkInterrupt(b *testing.B) {
	p := start(b, startOpts{})
	var total time.Duration
	for i := 0; i < b.N; i++ {
		id := "int" + strconv.Itoa(i)
		p.send(map[string]any{"id": id, "code": "import time\nprint('in', flush=True)\ntime.sleep(30)"})
		var t0 time.Time
		c := p.collect(id, func(f frames.Frame) {
			if f.Type == frames.TypeStarted {
				p.out.waitFor(b, "in\n")
				time.Sleep(5 * time.Millisecond)
				t0 = time.Now()
				syscall.Kill(-p.cmd.Process.Pid, syscall.SIGINT)
			}
		})
		total += time.Since(t0)
		if !c.done().Cancelled {
			b.Fatalf("not cancelled: %+v", c.done())
		}
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "sigint-to-done-ms")
}

// BenchmarkColdStartIPythonShim alternates three starts to ready: bare
// `python -c pass` (the anchor), the runner with its IPython hooks taken out
// (core.py with the meta-path hook and the get_ipython builtin not
// installed; the ipy_*.py modules are only ever loaded by a cell that needs them) and
// the runner as shipped. The target is no measurable difference between the
// last two: nothing IPython-related is imported or loaded before ready.
func BenchmarkColdStartIPythonShim(b *testing.B) {
	exe := python(b)
	dir := b.TempDir()
	noHooks := embedded("core.py")
	for _, hook := range []string{"sys.meta_path.insert(0, _IPythonHook)", "builtins.get_ipython = get_ipython"} {
		if !strings.Contains(noHooks, hook) {
			b.Fatalf("core.py no longer has %q; update this benchmark", hook)
		}
		noHooks = strings.Replace(noHooks, hook, "pass", 1)
	}
	for _, f := range embeddedFiles {
		data := f.data
		if f.name == "core.py" {
			data = noHooks
		}
		if err := os.WriteFile(dir+"/"+f.name, []byte(data), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	without := dir + "/runner.py"
	startAt(b, exe, without) // writes its bytecode cache
	var bare, before, now time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		bareCmd := exec.Command(exe, "-c", "pass")
		bareCmd.Env = benchEnv()
		if err := bareCmd.Run(); err != nil {
			b.Fatal(err)
		}
		bare += time.Since(t0)
		before += startAt(b, exe, without)
		now += startAt(b, exe, runnerPath)
	}
	n := float64(b.N)
	b.ReportMetric(float64(bare.Microseconds())/n/1000, "bare-ms")
	b.ReportMetric(float64(before.Microseconds())/n/1000, "noshim-ms")
	b.ReportMetric(float64(now.Microseconds())/n/1000, "shim-ms")
	b.ReportMetric(float64(now)/float64(before), "shim/noshim")
	b.ReportMetric(float64(now)/float64(bare), "shim/bare")
}

// BenchmarkMagicPrecheck is the per-cell cost of looking for magics: a warm
// round trip of a cell with '%' and '!' in plain Python (the cheap check
// says no magic, or the tokenizer confirms none) against `1+1`.
func BenchmarkMagicPrecheck(b *testing.B) {
	p := start(b, startOpts{})
	cells := map[string]string{
		"plain":     "1+1",
		"modulo":    "x = 7 % 3 != 1",
		"tokenized": "s = '''\n!not a command\n'''\n1",
	}
	lat := map[string][]time.Duration{}
	for i := 0; i < 100; i++ {
		p.run(cells["tokenized"])
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for name, code := range cells {
			t0 := time.Now()
			c := p.run(code)
			lat[name] = append(lat[name], time.Since(t0))
			if c.done().Status != "ok" {
				b.Fatalf("%s: done %+v", name, c.done())
			}
		}
	}
	b.StopTimer()
	p50 := func(d []time.Duration) float64 { slices.Sort(d); return float64(d[len(d)/2].Nanoseconds()) / 1000 }
	for name := range cells {
		b.ReportMetric(p50(lat[name]), name+"-p50-µs")
	}
	b.ReportMetric(p50(lat["tokenized"])/p50(lat["plain"]), "tokenized/plain")
}

// BenchmarkPath is what every session start pays to re-verify the cache:
// ownership and mode of the dirs and files, and that each file is the one
// the stamp records ("stamped") or, within racyWindow of a write, its
// content ("compared").
func BenchmarkPath(b *testing.B) {
	for _, stamped := range []bool{true, false} {
		b.Run(map[bool]string{true: "stamped", false: "compared"}[stamped], func(b *testing.B) {
			cache := b.TempDir()
			p, err := Path(cache)
			if err != nil {
				b.Fatal(err)
			}
			if stamped {
				stampSettled(b, filepath.Dir(p))
			}
			for b.Loop() {
				if _, err := Path(cache); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
