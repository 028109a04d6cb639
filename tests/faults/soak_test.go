package faults

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/heappeak"
	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/sessions"
)

var (
	soak         = flag.Bool("soak", false, "run the soak test (thousands of cells with random faults)")
	soakCells    = flag.Int("soak.cells", 5000, "cells the soak test runs")
	soakSessions = flag.Int("soak.sessions", 8, "sessions the soak test runs in parallel")
)

// fault is one kind of cell the soak draws, with what its result must say.
type fault struct {
	name   string
	weight int
	cell   func(n int, dir string) sessions.Cell
	// cancelAfter > 0 cancels the request that long after it was sent.
	cancelAfter time.Duration
	// killOn, when set, SIGKILLs the interpreter when stdout contains it.
	killOn string
	want   sessions.Status
}

func soakFaults() []fault {
	sleep := func(n int, _ string) sessions.Cell { return py("import time\ntime.sleep(5)") }
	return []fault{
		{name: "ok", weight: 70, want: sessions.StatusOK, cell: func(n int, _ string) sessions.Cell {
			return py(fmt.Sprintf("x = %d\nprint('value', x)", n))
		}},
		{name: "error", weight: 8, want: sessions.StatusError, cell: func(int, string) sessions.Cell { return py("1/0") }},
		{name: "output", weight: 5, want: sessions.StatusOK, cell: func(int, string) sessions.Cell {
			return py("import sys\nfor i in range(4000): sys.stdout.write('%05d ' % i + 'z' * 50 + '\\n')")
		}},
		{name: "sh", weight: 3, want: sessions.StatusOK, cell: func(n int, _ string) sessions.Cell {
			return sessions.Cell{Language: sessions.LangShell, Code: "echo sh " + strconv.Itoa(n)}
		}},
		{name: "reset", weight: 2, want: sessions.StatusOK, cell: func(int, string) sessions.Cell {
			c := py("print('after reset')")
			c.Reset = true
			return c
		}},
		{name: "self-kill", weight: 2, want: sessions.StatusKilled, cell: func(int, string) sessions.Cell {
			return py("import os\nos.kill(os.getpid(), 9)")
		}},
		{name: "exit", weight: 2, want: sessions.StatusKilled, cell: func(int, string) sessions.Cell {
			return py("import os\nos._exit(7)")
		}},
		{name: "external-kill", weight: 3, want: sessions.StatusOK, killOn: "kill-me",
			cell: func(n int, dir string) sessions.Cell {
				m := strconv.Quote(filepath.Join(dir, "m"+strconv.Itoa(n)))
				return pyT("import os, time\nif not os.path.exists("+m+"):\n    open("+m+", 'w').close()\n    print('kill-me', os.getpid(), flush=True)\n    time.sleep(30)\nprint('retried')", 20*time.Second)
			}},
		{name: "spawn", weight: 2, want: sessions.StatusOK, cell: func(int, string) sessions.Cell {
			return py(spawnCode("py", false))
		}},
		{name: "spawn-sh", weight: 1, want: sessions.StatusOK, cell: func(int, string) sessions.Cell {
			return sessions.Cell{Language: sessions.LangShell, Code: spawnCode("sh", false)}
		}},
		{name: "cancel", weight: 8, want: sessions.StatusCancelled, cancelAfter: 30 * time.Millisecond, cell: sleep},
		{name: "timeout", weight: 2, want: sessions.StatusTimeout, cell: func(int, string) sessions.Cell {
			return pyT("import time\ntime.sleep(5)", time.Second)
		}},
		{name: "timeout-ignored", weight: 1, want: sessions.StatusTimeout, cell: func(int, string) sessions.Cell {
			return pyT("import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: pass", time.Second)
		}},
	}
}

func pick(fs []fault, rng *rand.Rand) fault {
	total := 0
	for _, f := range fs {
		total += f.weight
	}
	n := rng.IntN(total)
	for _, f := range fs {
		if n < f.weight {
			return f
		}
		n -= f.weight
	}
	return fs[0]
}

// soakStats are the figures the soak reports.
type soakStats struct {
	mu         sync.Mutex
	cells      int
	byFault    map[string]int
	time       map[string]time.Duration
	mismatches []string
	pids       map[int]bool
	peakHeap   uint64
}

func (s *soakStats) mismatch(format string, a ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.mismatches) < 20 {
		s.mismatches = append(s.mismatches, fmt.Sprintf(format, a...))
	}
	s.cells++ // counted once even if wrong
}

// TestSoak runs thousands of cells on 8 sessions with random deaths,
// kills, timeouts and cancels, then checks that every cell got exactly one
// result of the right kind and that nothing leaked.
func TestSoak(t *testing.T) {
	if !*soak {
		t.Skip("soak test: run with -soak (and -soak.cells N)")
	}
	grace := 300 * time.Millisecond
	// A generous start timeout: hundreds of restarts on two loaded cores
	// must not turn into start failures the soak is not about.
	r := newRegistry(t, sessions.Config{MaxSessions: *soakSessions, Grace: grace, StartTimeout: 30 * time.Second})
	dir := t.TempDir()
	st := &soakStats{byFault: map[string]int{}, time: map[string]time.Duration{}, pids: map[int]bool{}}
	faults := soakFaults()
	var next atomic.Int64
	hp := heappeak.Start()
	start := time.Now()
	var wg sync.WaitGroup
	for w := range *soakSessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 42))
			for {
				n := int(next.Add(1))
				if n > *soakCells {
					return
				}
				soakOne(r, "soak"+strconv.Itoa(w), n, dir, pick(faults, rng), st)
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	growth := hp.Stop()
	if err := r.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	for pid := range st.pids {
		if !leakcheck.Gone(pid, hangBound) {
			t.Errorf("interpreter %d survived Close", pid)
		}
	}
	// What the cells started, setsid and double-forked included, is not
	// below this process any more, so it is found by working directory.
	if left := leakcheck.GoneFromDir(dir, hangBound); len(left) > 0 {
		t.Errorf("%d processes the cells started survived Close: %q", len(left), left)
	}
	t.Logf("%d cells in %v: %.0f cells/s; host heap peak +%.1f MB, VmHWM %s; interpreters started %d; by kind %v",
		st.cells, el.Round(time.Millisecond), float64(st.cells)/el.Seconds(), float64(growth)/1e6, vmHWM(), len(st.pids), st.byFault)
	for k, d := range st.time {
		t.Logf("%-16s %5d cells, mean %v", k, st.byFault[k], (d / time.Duration(max(st.byFault[k], 1))).Round(time.Millisecond))
	}
	if st.cells != *soakCells {
		t.Errorf("%d cells got a result, want %d", st.cells, *soakCells)
	}
	for _, m := range st.mismatches {
		t.Error(m)
	}
	// The registry's cleanup then checks goroutines, fds and descendants.
}

// soakOne sends one one-cell request and checks its single result.
func soakOne(r *sessions.Registry, session string, n int, dir string, f fault, st *soakStats) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if f.cancelAfter > 0 {
		tm := time.AfterFunc(f.cancelAfter, cancel)
		defer tm.Stop()
	}
	c := newCollector()
	c.keep = f.name != "output"
	if f.killOn != "" {
		var once sync.Once
		c.onData = func(s string) {
			if strings.Contains(s, f.killOn) {
				once.Do(func() {
					// The cell names its own pid: a warm interpreter sent
					// its ready frame in an earlier request.
					_, rest, _ := strings.Cut(s, f.killOn+" ")
					if pid, err := strconv.Atoi(strings.Fields(rest + " x")[0]); err == nil {
						_ = syscall.Kill(pid, syscall.SIGKILL)
					}
				})
			}
		}
	}
	var ends atomic.Int32
	req := sessions.Request{Session: session, Cwd: dir, Cells: []sessions.Cell{f.cell(n, dir)},
		OnCellEnd: func(sessions.CellResult) { ends.Add(1) }}
	began := time.Now()
	res, err := r.Eval(ctx, req, c.emit)
	st.mu.Lock()
	st.time[f.name] += time.Since(began)
	for _, pid := range c.readyPIDs() {
		st.pids[pid] = true
	}
	st.mu.Unlock()
	switch {
	case err != nil:
		st.mismatch("cell %d (%s): Eval: %v", n, f.name, err)
		return
	case ends.Load() != 1 || len(res.Cells) != 1:
		st.mismatch("cell %d (%s): %d cell ends, %d results; want exactly 1", n, f.name, ends.Load(), len(res.Cells))
		return
	}
	got := res.Cells[0]
	ok := got.Status == f.want
	if f.name == "cancel" && got.Status == sessions.StatusCancelled && got.ExecutionCount == 0 {
		ok = true // cancelled while queued or starting: also one honest result
	}
	switch {
	case !ok:
		st.mismatch("cell %d (%s): status %s, want %s; message %q; output %q", n, f.name, got.Status, f.want, got.Message, tail(c.text()))
	case f.name == "ok" && !strings.Contains(c.text(), fmt.Sprintf("value %d\n", n)):
		st.mismatch("cell %d (ok): output %q lacks its value", n, tail(c.text()))
	case f.name == "external-kill" && (!got.Retried || !strings.Contains(c.text(), "retried")):
		st.mismatch("cell %d (external-kill): retried %v, output %q", n, got.Retried, tail(c.text()))
	default:
		st.mu.Lock()
		st.cells++
		st.byFault[f.name]++
		st.mu.Unlock()
	}
}

func tail(s string) string { return s[max(len(s)-300, 0):] }

// vmHWM is this process's peak resident set, from /proc/self/status.
func vmHWM() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "?"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			return strings.Join(strings.Fields(v), " ")
		}
	}
	return "?"
}
