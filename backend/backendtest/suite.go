package backendtest

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/testkit"
)

// Backend is one backend under test.
type Backend struct {
	Lang Lang
	// Start starts a fresh executor whose cancellation waits grace before it
	// kills. The suite closes it; Start may register its own cleanups
	// (checking that no process is left, say).
	Start func(t *testing.T, grace time.Duration) backend.Executor
	// Clean, when set, is called first in each case that starts its own
	// executor, to arm leak checks that run after the case's cleanups.
	Clean func(t *testing.T)
}

// grace is the executors' grace: long enough for an interrupted cell to
// end under load, short enough that a kill after an ignored interrupt
// does not slow the suite.
const grace = 2 * time.Second

type suiteCase struct {
	name  string
	fresh bool // the case ends its executor, so it gets its own
	run   func(t *testing.T, b Backend, ex backend.Executor)
}

var cases = []suiteCase{
	{"ready", false, testReady},
	{"frames before done", false, testFrames},
	{"generated id", false, testGeneratedID},
	{"failed cell is no error", false, testFail},
	{"state persists", false, testState},
	{"cwd and env", false, testCwdEnv},
	{"argv", false, testArgv},
	{"a script's directory on the path", false, testScriptDir},
	{"exit request refused", false, testExitRefused},
	{"interrupt while idle", false, testIdleInterrupt},
	{"busy", false, testBusy},
	{"cancel keeps state", false, testCancel},
	{"ignored interrupt is killed", true, testIgnored},
	{"death", true, testDeath},
	{"kill during a cell", true, testKillDuring},
	{"close", true, testClose},
}

// Run runs the conformance table against b.
func Run(t *testing.T, b Backend) {
	t.Helper()
	var shared backend.Executor
	parent := t
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// A hang fails the case that hung, with every goroutine's stack.
			t.Cleanup(leakcheck.Watchdog(t, 2*time.Minute))
			ex := shared
			if c.fresh && shared != nil {
				// A fresh case's leak check must not count the shared
				// executor's process, so it ends first.
				_ = shared.Close()
				shared = nil
			}
			if c.fresh {
				if b.Clean != nil {
					b.Clean(t)
				}
				ex = start(t, b)
			} else if ex == nil || !ex.Alive() {
				// Started for the whole run, not this case: closed by
				// the parent's cleanup.
				ex = start(parent, b)
				shared = ex
			}
			c.run(t, b, ex)
		})
	}
}

func start(t *testing.T, b Backend) backend.Executor {
	t.Helper()
	ex := b.Start(t, grace)
	t.Cleanup(func() {
		_ = ex.Close()
		select {
		case <-ex.Done():
		default:
			t.Errorf("Done not closed after Close returned")
		}
	})
	return ex
}

// cell is one Execute's outcome.
type cell struct {
	frames []frames.Frame
	done   frames.Frame
	err    error
}

func (c *cell) text(typ frames.Type) string { return testkit.Text(c.frames, typ) }

// exec runs one cell, checking what every Execute owes its caller: frames
// emitted from the calling goroutine, before it returns, started first.
func exec(t *testing.T, ex backend.Executor, ctx context.Context, req frames.Request, seen func(frames.Frame)) *cell {
	t.Helper()
	c := &cell{}
	var returned bool
	var mu sync.Mutex
	c.done, c.err = ex.Execute(ctx, req, func(f frames.Frame) {
		if !mu.TryLock() {
			t.Errorf("emit called concurrently with itself")
			return
		}
		defer mu.Unlock()
		if returned {
			t.Errorf("frame %s emitted after Execute returned", f.Type)
		}
		c.frames = append(c.frames, f)
		if seen != nil {
			seen(f)
		}
	})
	mu.Lock()
	returned = true
	mu.Unlock()
	if c.err == nil {
		if len(c.frames) == 0 || c.frames[0].Type != frames.TypeStarted {
			t.Errorf("first frame is not started: %v", types(c.frames))
		}
		if c.done.Type != frames.TypeDone {
			t.Errorf("Execute returned a %s frame, want done", c.done.Type)
		}
		for _, f := range c.frames {
			if f.ID != c.done.ID {
				t.Errorf("%s frame has id %q, done has %q", f.Type, f.ID, c.done.ID)
			}
		}
	}
	if req.ID != "" && c.err == nil && c.done.ID != req.ID {
		t.Errorf("done id %q, want %q", c.done.ID, req.ID)
	}
	return c
}

func types(fs []frames.Frame) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Type.String()
	}
	return out
}

// ok runs code and fails unless it ends with status ok.
func ok(t *testing.T, ex backend.Executor, id, code string) *cell {
	t.Helper()
	c := exec(t, ex, context.Background(), frames.Request{ID: id, Code: code}, nil)
	if c.err != nil || c.done.Status != "ok" {
		t.Fatalf("cell %q: status %q, err %v; frames %v", code, c.done.Status, c.err, c.frames)
	}
	return c
}

// whenPrinted returns an emit hook that calls act once, when the cell's
// stdout has printed word.
func whenPrinted(word string, act func()) func(frames.Frame) {
	var out strings.Builder
	var once sync.Once
	return func(f frames.Frame) {
		if f.Type != frames.TypeStdout {
			return
		}
		out.WriteString(f.Data)
		if strings.Contains(out.String(), word) {
			once.Do(act)
		}
	}
}

func wantContains(t *testing.T, what, got, want string) {
	t.Helper()
	if !strings.Contains(got, want) {
		t.Errorf("%s %q lacks %q", what, got, want)
	}
}

// wantEnded fails unless ex has ended and refuses further cells.
func wantEnded(t *testing.T, ex backend.Executor) {
	t.Helper()
	select {
	case <-ex.Done():
	case <-time.After(time.Minute): // a hang's bound, not a timing
		t.Fatalf("Done not closed a minute after the interpreter ended")
	}
	if ex.Alive() {
		t.Errorf("Alive after the interpreter ended")
	}
	_, err := ex.Execute(context.Background(), frames.Request{ID: "after", Code: "1"}, func(frames.Frame) {})
	if !errors.Is(err, backend.ErrClosed) && !errors.Is(err, backend.ErrDied) {
		t.Errorf("Execute after the end: %v, want ErrClosed or ErrDied", err)
	}
}

func tempDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return dir
}
