package host

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/testkit"
	"github.com/evalhost/evalhost/runner"
)

var testRunner = flag.String("runner", os.Getenv("HOST_TEST_RUNNER"), "runner.py path (default: the embedded runner.Path)")

func TestMain(m *testing.M) {
	if mode := os.Getenv("HOST_FAKE_RUNNER"); mode != "" {
		os.Exit(fakeRunner(mode))
	}
	if code := os.Getenv("HOST_TTY_CELL"); code != "" {
		os.Exit(ttyHost(code))
	}
	flag.Parse()
	// The runner honours PYTHONUNBUFFERED as python3 does (a frame per
	// write), and a machine may set it for its own python3: the tests'
	// frames are a buffered runner's, as sessions give it (they drop the
	// variable), wherever they run.
	testkit.Hermetic()
	os.Exit(m.Run())
}

// fakeRunner plays a child a real interpreter can't: one that never gets ready.
func fakeRunner(mode string) int {
	switch mode {
	case "noready":
		fmt.Fprintln(os.Stderr, "fake runner: loading modules")
		fmt.Fprintln(os.Stderr, "fake runner: stuck before ready")
		time.Sleep(time.Minute)
		return 0
	case "latepos":
		return fakeLatePos()
	case "lateexit":
		return fakeLateExit()
	case "closethenexit":
		return fakeCloseThenExit()
	case "latemark", "nomark":
		return fakeLateMark(mode == "latemark")
	default:
		fmt.Fprintf(os.Stderr, "unknown fake runner mode %q\n", mode)
		return 2
	}
}

// python is the real interpreter the tests run (see testkit.Python).
func python(tb testing.TB) string { tb.Helper(); return testkit.Python(tb) }

func runnerPath(tb testing.TB) string {
	tb.Helper()
	if *testRunner != "" {
		return *testRunner
	}
	runnerOnce.Do(func() { runnerFile, runnerErr = runner.Path(filepath.Join(os.TempDir(), "evalhost-host-test")) })
	if runnerErr != nil {
		tb.Fatalf("runner: %v", runnerErr)
	}
	return runnerFile
}

var (
	runnerOnce sync.Once
	runnerFile string
	runnerErr  error
)

func pyOptions(tb testing.TB) Options {
	return Options{Python: python(tb), Runner: runnerPath(tb), Grace: 2 * time.Second}
}

// checkClean arms a deadlock watchdog and, at cleanup, fails on goroutines,
// file descriptors and processes that outlived the test. Call it first, so
// it checks after the test's other cleanups closed what they started.
func checkClean(t *testing.T, limit time.Duration) {
	t.Helper()
	t.Cleanup(leakcheck.Watchdog(t, limit))
	leakcheck.Check(t, leakcheck.Options{FDs: true})
}

// startPy starts a real runner, closes it at cleanup and checks that no
// process of its group is left.
func startPy(t *testing.T, mod func(*Options)) *Process {
	t.Helper()
	o := pyOptions(t)
	if mod != nil {
		mod(&o)
	}
	p, err := Start(context.Background(), o)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		checkGone(t, p.Pid())
	})
	return p
}

// checkGone fails when pid or any member of its process group is still
// running. Zombies count as gone: reaping orphans is init's job, and a busy
// init may take seconds.
func checkGone(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		live := liveInGroup(pid)
		if len(live) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("process group %d still has running members: %v", pid, live)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// liveInGroup lists the non-zombie processes whose pid or process group is pgid.
func liveInGroup(pgid int) []string {
	ents, _ := os.ReadDir("/proc")
	var live []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state ppid pgrp ...
		if len(f) < 3 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		if e.Name() == strconv.Itoa(pgid) || f[2] == strconv.Itoa(pgid) {
			live = append(live, s[:i+1])
		}
	}
	return live
}

// run executes code and collects what Execute emitted.
type run struct {
	frames []frames.Frame
	done   frames.Frame
	err    error
}

func (r *run) stdout() string { return r.text(frames.TypeStdout) }
func (r *run) stderr() string { return r.text(frames.TypeStderr) }

func (r *run) text(t frames.Type) string { return testkit.Text(r.frames, t) }

func (r *run) first(t frames.Type) (frames.Frame, bool) {
	for _, f := range r.frames {
		if f.Type == t {
			return f, true
		}
	}
	return frames.Frame{}, false
}

func execute(t *testing.T, p *Process, ctx context.Context, code string) *run {
	t.Helper()
	r := &run{}
	r.done, r.err = p.Execute(ctx, frames.Request{Code: code}, func(f frames.Frame) {
		r.frames = append(r.frames, f)
	})
	return r
}

func dumpFrames(fs []frames.Frame) string {
	var b bytes.Buffer
	for i := range fs {
		b.Write(frames.AppendJSON(nil, &fs[i]))
		b.WriteByte('\n')
	}
	return b.String()
}

// fakeOptions starts this test binary as a fake runner of mode
// (fakeRunner), as its interpreter and its runner both.
func fakeOptions(t *testing.T, mode string) Options {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Options{Python: self, Runner: self, Env: append(os.Environ(), "HOST_FAKE_RUNNER="+mode)}
}

// fakeCell is what a fake runner that acts at a SIGCONT has once its first
// cell came (fakeFirstCell).
type fakeCell struct {
	frames *os.File       // fd 3
	in     *bufio.Scanner // the requests, the first one read
	req    frames.Request // the first cell's
	id     string         // its id, JSON-quoted
	cont   chan os.Signal // SIGCONTs, notified from the start
	nonce  string
}

// fakeFirstCell starts a fake runner: SIGCONT notified, its ready frame
// sent (announcing position marks with marks), the first request read.
// ok is false when none came, or it was the exit.
func fakeFirstCell(marks bool) (f fakeCell, ok bool) {
	f.cont = make(chan os.Signal, 1)
	signal.Notify(f.cont, syscall.SIGCONT)
	f.frames, f.nonce = os.NewFile(3, "frames"), os.Getenv(nonceEnv)
	withMarks := ""
	if marks {
		withMarks = `,"marks":true`
	}
	fmt.Fprintf(f.frames, `{"type":"ready","runner":"fake","python":"fake","pid":%d%s}`+"\n", os.Getpid(), withMarks)
	f.in = bufio.NewScanner(os.Stdin)
	f.in.Buffer(nil, 1<<20)
	if !f.in.Scan() {
		return f, false
	}
	req, err := frames.DecodeRequest(f.in.Bytes())
	if err != nil || req.Exit {
		return f, false
	}
	f.req, f.id = req, string(frames.AppendString(nil, req.ID))
	return f, true
}

// mark is the sync mark of id (a cell's, or a position's) on fd 1 or 2.
func (f fakeCell) mark(id string) string { return "\x00\x1eEVH" + f.nonce + ":" + id + "\x1e\x00" }
