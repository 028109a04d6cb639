package faults

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/testkit"
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
	return testkit.Registry(t, watchdogLimit(), leakcheck.Options{FDs: true}, func() *sessions.Registry { return sessions.New(cfg) })
}

// watchdogLimit is watchdogAfter, or for the soak as long as its cells may take.
func watchdogLimit() time.Duration {
	if *soak {
		return time.Duration(*soakCells) * 200 * time.Millisecond
	}
	return watchdogAfter
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
	return testkit.Output(c.frames)
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
