package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
)

func TestInterruptDuringCell(t *testing.T) {
	p := start(t, startOpts{})
	p.send(map[string]any{"id": "s", "code": "import time\nprint('sleeping', flush=True)\ntime.sleep(30)"})
	c := p.collect("s", func(f frames.Frame) {
		if f.Type == frames.TypeStarted {
			p.out.waitFor(t, "sleeping\n")    // the cell is inside its code, not before it
			time.Sleep(20 * time.Millisecond) // let it reach time.sleep; either line is correct
			p.interrupt()
		}
	})
	d := c.done()
	if d.Status != frames.StatusError || !d.Cancelled {
		t.Errorf("done %+v, want error and cancelled", d)
	}
	e := wantError(t, c, "KeyboardInterrupt")
	tb := strings.Join(e.Traceback, "\n")
	if !strings.Contains(tb, `File "<cell 1>", line`) || strings.Contains(tb, "runner.py") {
		t.Errorf("traceback:\n%s", tb)
	}
	// The handler acknowledged the interrupt (so the host stops repeating
	// it), once, before the error it raised.
	if got := frameTypes(c); !strings.Contains(got, "started interrupted error done") {
		t.Errorf("frames %s; want one interrupted frame before the error", got)
	}
	// A KeyboardInterrupt the cell raises itself is not a cancellation.
	c = p.run("raise KeyboardInterrupt")
	if d := c.done(); d.Cancelled || d.Status != frames.StatusError {
		t.Errorf("self-raised KeyboardInterrupt: done %+v", d)
	}
	if got := frameTypes(c); strings.Contains(got, "interrupted") {
		t.Errorf("self-raised KeyboardInterrupt: frames %s", got)
	}
	wantResult("2")(t, p.run("1 + 1"))
}

func frameTypes(c cellResult) string {
	var s []string
	for _, f := range c.frames {
		s = append(s, f.Type.String())
	}
	return strings.Join(s, " ")
}

func TestInterruptWhileIdleIsIgnored(t *testing.T) {
	p := start(t, startOpts{})
	p.run("x = 1")
	for i := 0; i < 3; i++ {
		if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		waitNoPendingSignal(t, p.cmd.Process.Pid, syscall.SIGINT)
	}
	c := p.run("x + 1")
	if d := c.done(); d.Status != frames.StatusOK || d.Cancelled || d.ExecutionCount != 2 {
		t.Errorf("after idle SIGINT: done %+v", d)
	}
	wantResult("2")(t, c)
}

// waitNoPendingSignal waits until the kernel has delivered sig to pid, so an
// idle interrupt cannot be mistaken for one that lands in the next cell.
func waitNoPendingSignal(t *testing.T, pid int, sig syscall.Signal) {
	t.Helper()
	bit := uint64(1) << (uint(sig) - 1)
	deadline := time.Now().Add(watchdog)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if err != nil {
			t.Fatalf("read status: %v", err)
		}
		pending := uint64(0)
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && (k == "SigPnd" || k == "ShdPnd") {
				n, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
				pending |= n
			}
		}
		if pending&bit == 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("watchdog: %v still pending", sig)
}

func TestExit(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(p *proc)
	}{
		{"exit request", func(p *proc) { p.send(map[string]any{"type": "exit"}) }},
		{"EOF on fd 0", func(p *proc) { p.req.Close() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, startOpts{})
			p.run("import threading\nthreading.Thread(target=print, args=('bg',), daemon=True).start()")
			tc.end(p)
			if code := p.wait(); code != 0 {
				t.Errorf("exit code %d, want 0", code)
			}
		})
	}
}

func TestBadRequestLinesAreSkipped(t *testing.T) {
	p := start(t, startOpts{})
	for _, line := range []string{"not json", `{"id":1,"code":"1"}`, `[1,2]`, `{"type":"bogus","id":"b"}`, `{"id":"x"} trailing`} {
		if _, err := p.req.Write([]byte(line + "\n")); err != nil {
			t.Fatal(err)
		}
		if f := p.next(); f.Type != frames.TypeWarning || f.Message == "" {
			t.Errorf("line %q: got %+v, want a warning", line, f)
		}
	}
	wantResult("2")(t, p.run("1 + 1"))
}

func TestForkedChildDoesNotServe(t *testing.T) {
	p := start(t, startOpts{})
	c := p.run("import os\npid = os.fork()\nif pid == 0:\n    print('child')\nelse:\n    os.waitpid(pid, 0)\n    print('parent')")
	if d := c.done(); d.Status != frames.StatusOK {
		t.Fatalf("done %+v", d)
	}
	if c.stdout != "child\nparent\n" {
		t.Errorf("stdout %q", c.stdout)
	}
	wantResult("2")(t, p.run("1 + 1"))
}

// TestOutputStreamsWhileCellRuns: a print reaches the pipe while its cell is
// still running (the flusher), not only at cell end. The cell waits for the
// test to have seen the text, so it fails, not hangs, when nothing flushes.
func TestOutputStreamsWhileCellRuns(t *testing.T) {
	p := start(t, startOpts{})
	flag := filepath.Join(t.TempDir(), "seen")
	for _, tc := range []struct{ name, emit, want string }{
		{"stdout", "print('tick')", "tick\n"},
		{"partial line", "import sys\nsys.stdout.write('part')", "part"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(flag)
			code := tc.emit + "\nimport os, time\nfor _ in range(500):\n    if os.path.exists(" + strconv.Quote(flag) +
				"):\n        break\n    time.sleep(0.01)\nos.path.exists(" + strconv.Quote(flag) + ")"
			p.seq++
			id := "live" + strconv.Itoa(p.seq)
			p.send(map[string]any{"id": id, "code": code})
			c := p.collect(id, func(f frames.Frame) {
				if f.Type == frames.TypeStarted {
					p.out.waitFor(t, tc.want)
					if err := os.WriteFile(flag, nil, 0o644); err != nil {
						t.Error(err)
					}
				}
			})
			wantResult("True")(t, c)
		})
	}
}

// An interrupt that lands at any point of a request, down to the started
// frame's write, cancels that cell and never kills the runner.
func TestInterruptRightAfterSubmit(t *testing.T) {
	p := start(t, startOpts{})
	for i := 0; i < 50; i++ {
		id := fmt.Sprintf("r%d", i)
		p.send(map[string]any{"id": id, "code": "import time\ntime.sleep(0.001 * " + strconv.Itoa(i%3) + ")"})
		if err := syscall.Kill(-p.cmd.Process.Pid, syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		if d := p.collect(id, nil).done(); d.Status == frames.StatusError && !d.Cancelled {
			t.Fatalf("request %d: done %+v, want ok or cancelled", i, d)
		}
	}
	wantResult("2")(t, p.run("1 + 1"))
}
