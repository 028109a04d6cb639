package faults

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/sessions"
	"github.com/evalhost/evalhost/streamsink"
)

// watchdogAfter bounds every test but the soak: a hang is the bug this
// package hunts, and a goroutine dump says where it hangs.
const watchdogAfter = 3 * time.Minute

// newRegistry returns a registry with a private home and artifacts store.
// When the test ends it is closed, and no goroutine, descendant process or
// file descriptor may outlive it.
func newRegistry(t *testing.T, cfg sessions.Config) *sessions.Registry {
	t.Helper()
	requirePython(t)
	if cfg.Home == "" {
		cfg.Home = t.TempDir()
	}
	if cfg.Sink.Store == nil {
		cfg.Sink.Store = streamsink.NewStore(filepath.Join(cfg.Home, "artifacts"))
	}
	if cfg.Grace == 0 {
		cfg.Grace = 500 * time.Millisecond
	}
	if cfg.StartTimeout == 0 {
		// CI machines run many suites at once; a slow start is not the
		// fault under test (the start-timeout tests set their own).
		cfg.StartTimeout = 60 * time.Second
	}
	base := takeBaseline()
	stop := watchdog(t)
	r := sessions.New(cfg)
	t.Cleanup(func() {
		defer stop()
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		base.check(t)
	})
	return r
}

func requirePython(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not on PATH")
	}
}

func watchdog(t testing.TB) (stop func()) {
	after := watchdogAfter
	if *soak {
		after = time.Duration(*soakCells) * 200 * time.Millisecond
	}
	tm := time.AfterFunc(after, func() {
		buf := make([]byte, 4<<20)
		n := runtime.Stack(buf, true)
		panic(fmt.Sprintf("deadlock watchdog: %s still running after %v\n%s", t.Name(), after, buf[:n]))
	})
	return func() { tm.Stop() }
}

// baseline is what this process owned before a test.
type baseline struct {
	goroutines int
	fds        int
}

func takeBaseline() baseline {
	return baseline{goroutines: runtime.NumGoroutine(), fds: countFDs()}
}

// check waits briefly for teardown to settle, then reports what leaked.
func (b baseline) check(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if runtime.NumGoroutine() <= b.goroutines && countFDs() <= b.fds && len(descendants()) == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > b.goroutines {
		buf := make([]byte, 4<<20)
		t.Errorf("%d goroutines leaked:\n%s", n-b.goroutines, buf[:runtime.Stack(buf, true)])
	}
	if n := countFDs(); n > b.fds {
		t.Errorf("%d file descriptors leaked: %s", n-b.fds, listFDs())
	}
	if d := descendants(); len(d) > 0 {
		t.Errorf("processes left behind: %v", d)
		for _, p := range d {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
	}
}

func countFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	return len(ents)
}

func listFDs() string {
	ents, _ := os.ReadDir("/proc/self/fd")
	var out []string
	for _, e := range ents {
		target, _ := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		out = append(out, e.Name()+"→"+target)
	}
	return strings.Join(out, " ")
}

// proc is one process found in /proc.
type proc struct {
	pid, ppid int
	state     string
	comm      string
}

func (p proc) String() string { return fmt.Sprintf("%d(%s,%s)", p.pid, p.comm, p.state) }

func readProc(pid int) (proc, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return proc{}, false
	}
	s := string(b)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return proc{}, false
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 2 {
		return proc{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	return proc{pid: pid, ppid: ppid, state: f[0], comm: s[open+1 : end]}, true
}

// descendants lists the live (non-zombie) processes below this one.
func descendants() []proc {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]proc{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readProc(pid); ok {
			children[p.ppid] = append(children[p.ppid], p)
		}
	}
	var out []proc
	var walk func(int)
	walk = func(pid int) {
		for _, c := range children[pid] {
			if c.state != "Z" {
				out = append(out, c)
			}
			walk(c.pid)
		}
	}
	walk(os.Getpid())
	return out
}

// alive reports whether pid is a running (non-zombie) process.
func alive(pid int) bool {
	p, ok := readProc(pid)
	return ok && p.state != "Z"
}

// waitGone polls until pid has ended or the deadline passes.
func waitGone(pid int, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for alive(pid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// collector gathers a request's frames; emit is called from one goroutine
// at a time, but the test reads from another.
type collector struct {
	mu     sync.Mutex
	frames []frames.Frame
	pids   []int
	onData func(string) // optional, called for stdout data as it arrives
	keep   bool         // keep data frames (off for floods)
	bytes  int64
	valid  bool // every data frame was valid UTF-8 so far
}

func newCollector() *collector { return &collector{keep: true, valid: true} }

func (c *collector) emit(_ int, f frames.Frame) {
	c.mu.Lock()
	if f.Type == frames.TypeReady {
		c.pids = append(c.pids, f.PID)
	}
	if f.Type == frames.TypeStdout || f.Type == frames.TypeStderr {
		c.bytes += int64(len(f.Data))
		if !utf8.ValidString(f.Data) {
			c.valid = false
		}
	}
	if c.keep || (f.Type != frames.TypeStdout && f.Type != frames.TypeStderr) {
		c.frames = append(c.frames, f)
	}
	on := c.onData
	c.mu.Unlock()
	if on != nil && f.Type == frames.TypeStdout {
		on(f.Data)
	}
}

func (c *collector) text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, f := range c.frames {
		switch f.Type {
		case frames.TypeStdout, frames.TypeStderr:
			b.WriteString(f.Data)
		case frames.TypeError:
			b.WriteString(f.Ename + ": " + f.Evalue + "\n")
		}
	}
	return b.String()
}

func (c *collector) readyPIDs() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int(nil), c.pids...)
}

func py(code string) sessions.Cell { return sessions.Cell{Language: sessions.LangPython, Code: code} }

func pyT(code string, timeout time.Duration) sessions.Cell {
	c := py(code)
	c.Timeout = timeout
	return c
}

// eval runs one request and fails the test on an API error (not a cell's).
func eval(t testing.TB, r *sessions.Registry, ctx context.Context, req sessions.Request) (sessions.Result, *collector) {
	t.Helper()
	c := newCollector()
	res, err := r.Eval(ctx, req, c.emit)
	if err != nil {
		t.Fatalf("Eval: %v", err)
	}
	return res, c
}

// fakePython writes an executable script that answers the interpreter probe
// (which runs it with -c) like python 3 would, naming itself as
// sys.executable, and otherwise runs body.
func fakePython(t testing.TB, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "python3")
	script := "#!/bin/sh\nif [ \"$1\" = -c ]; then echo \"$0\"; echo 3.11.0; exit 0; fi\n" + body + "\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}
