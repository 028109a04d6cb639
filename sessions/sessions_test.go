package sessions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/remotetest"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/leakcheck"
	"github.com/evalhost/evalhost/internal/testkit"
)

// newTestRegistry returns a registry with a private home, closed when the
// test ends; then no goroutine, file descriptor or process of the test may
// be left.
func newTestRegistry(t *testing.T, cfg Config) *Registry {
	t.Helper()
	if cfg.Home == "" {
		cfg.Home = t.TempDir()
	}
	return testkit.Registry(t, 2*time.Minute, leaks, func() *Registry { return New(cfg) })
}

// leaks is what a registry may not leave behind. Every interpreter and
// shell must be reaped; the shared kernel gateway (and its kernels) is
// exempt: it outlives its users by design and tests stop it themselves, as
// is a test's Enterprise Gateway, which its fixture's teardown ends after
// this check.
var leaks = leakcheck.Options{
	FDs: true,
	IgnoreProcess: func(cmdline string) bool {
		return strings.Contains(cmdline, "kernel_gateway") || remotetest.Owns(cmdline)
	},
}

// collector gathers a request's frames.
type collector = testkit.Collector

func py(code string) Cell { return Cell{Language: LangPython, Code: code} }
func sh(code string) Cell { return Cell{Language: LangShell, Code: code} }

func eval(t *testing.T, r *Registry, req Request) (Result, *collector) {
	t.Helper()
	c := &collector{}
	res, err := r.Eval(context.Background(), req, c.Cell)
	if err != nil {
		t.Fatalf("Eval: %v", err)
	}
	return res, c
}

func TestCellsAndState(t *testing.T) {
	r := newTestRegistry(t, Config{})
	dir := t.TempDir()
	tests := []struct {
		name       string
		req        Request
		wantStatus Status
		wantFailed int
		wantText   string
		cellStatus []Status
	}{
		{"define", Request{Session: "a", Cwd: dir, Cells: []Cell{py("x = 41")}}, StatusOK, -1, "", []Status{StatusOK}},
		{"state persists in session mode", Request{Session: "a", Cwd: dir, Cells: []Cell{py("x + 1")}}, StatusOK, -1, "42\n", []Status{StatusOK}},
		{"per-call starts fresh", Request{Session: "a", Cwd: dir, Mode: ModePerCall, Cells: []Cell{py("x")}}, StatusError, 0, "NameError", []Status{StatusError}},
		{"error skips later cells", Request{Session: "a", Cwd: dir, Cells: []Cell{py("print('one')"), py("undefined_name"), py("print('three')")}},
			StatusError, 1, "one\nNameError", []Status{StatusOK, StatusError, StatusSkipped}},
		{"keep going runs them", Request{Session: "a", Cwd: dir, KeepGoing: true, Cells: []Cell{py("1/0"), py("print('after')")}},
			StatusError, 0, "after", []Status{StatusError, StatusOK}},
		{"an expected exception does not stop the request", Request{Session: "a", Cwd: dir, Cells: []Cell{{Language: LangPython, Code: "1/0", RaisesOK: true}, py("print('after')")}},
			StatusOK, -1, "after", []Status{StatusError, StatusOK}},
		{"a later failure is the request's", Request{Session: "a", Cwd: dir, Cells: []Cell{{Language: LangPython, Code: "1/0", RaisesOK: true}, py("undefined_name"), py("print('never')")}},
			StatusError, 1, "NameError", []Status{StatusError, StatusError, StatusSkipped}},
		{"reset clears state", Request{Session: "a", Cwd: dir, Cells: []Cell{{Language: LangPython, Code: "'x' in globals()", Reset: true}}},
			StatusOK, -1, "False", []Status{StatusOK}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, c := eval(t, r, tt.req)
			if res.Status != tt.wantStatus || res.FailedCell != tt.wantFailed {
				t.Fatalf("status %s failed cell %d, want %s %d; output %q", res.Status, res.FailedCell, tt.wantStatus, tt.wantFailed, c.Output())
			}
			for i, want := range tt.cellStatus {
				if res.Cells[i].Status != want {
					t.Errorf("cell %d status %s, want %s", i, res.Cells[i].Status, want)
				}
			}
			if !strings.Contains(c.Output(), tt.wantText) {
				t.Fatalf("output %q does not contain %q", c.Output(), tt.wantText)
			}
		})
	}
}

func TestResetFlagsStateLost(t *testing.T) {
	r := newTestRegistry(t, Config{})
	res, _ := eval(t, r, Request{Cells: []Cell{py("1"), {Language: LangPython, Code: "2", Reset: true}}})
	if res.Cells[0].StateLost || !res.Cells[1].StateLost {
		t.Fatalf("stateLost = %v, %v; want false, true", res.Cells[0].StateLost, res.Cells[1].StateLost)
	}
}

func TestConcurrentResetRejected(t *testing.T) {
	r := newTestRegistry(t, Config{})
	dir := t.TempDir()
	// Hold the session busy so the first reset waits in the queue.
	busy := make(chan error, 1)
	go func() {
		_, err := r.Eval(context.Background(), Request{Session: "s", Cwd: dir, Cells: []Cell{py("import time; time.sleep(1.5)")}}, nil)
		busy <- err
	}()
	waitBusy(t, r, "s")
	first := make(chan error, 1)
	go func() { first <- r.Reset(context.Background(), "s", dir) }()
	waitFor(t, func() bool {
		for _, s := range r.Sessions() {
			if s.Session == "s" && s.Resetting {
				return true
			}
		}
		return false
	})
	if second := r.Reset(context.Background(), "s", dir); !errors.Is(second, ErrResetInProgress) {
		t.Fatalf("second reset = %v, want ErrResetInProgress", second)
	}
	if err := <-first; err != nil {
		t.Fatalf("first reset: %v", err)
	}
	if err := <-busy; err != nil {
		t.Fatalf("busy request: %v", err)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not reached within 10 s")
}

func waitBusy(t *testing.T, r *Registry, id string) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		for _, s := range r.Sessions() {
			if s.Session == id && s.Busy && len(s.Languages) > 0 {
				return
			}
		}
	}
	t.Fatalf("session %s never became busy", id)
}

func TestEvictionAndIdleShutdown(t *testing.T) {
	// The idle timeout must outlast c's start, or b is closed as idle before
	// the check: at 400 ms it did, under -race on a loaded 2-core machine.
	r := newTestRegistry(t, Config{MaxSessions: 2, IdleTimeout: 2 * time.Second})
	dir := t.TempDir()
	for _, id := range []string{"a", "b", "c"} {
		if res, c := eval(t, r, Request{Session: id, Cwd: dir, Cells: []Cell{py("v = 1")}}); res.Status != StatusOK {
			t.Fatalf("session %s: %s %q", id, res.Status, c.Output())
		}
	}
	ids := map[string]bool{}
	for _, s := range r.Sessions() {
		ids[s.Session] = true
	}
	if len(ids) != 2 || ids["a"] {
		t.Fatalf("sessions after overflow = %v, want b and c (a was least recently used)", ids)
	}
	waitFor(t, func() bool { return len(r.Sessions()) == 0 }) // the idle timeout closes them
}

// Two sessions run at once: each cell waits for the other at a FIFO, which
// only returns once both are inside their cells (the cell timeout turns a
// registry that serialised them into a failure, not a hang).
func TestParallelSessions(t *testing.T) {
	r := newTestRegistry(t, Config{})
	dir := t.TempDir()
	meet := testkit.Mkfifo(t, dir, "meet")
	codes := map[string]string{
		"p1": "open(" + quote(meet) + ", 'w').close()\nprint('met')",
		"p2": "open(" + quote(meet) + ").read()\nprint('met')",
	}
	var wg sync.WaitGroup
	for id, code := range codes {
		wg.Go(func() {
			res, c := evalIn(t, r, Request{Session: id, Cwd: dir, Cells: []Cell{{Language: LangPython, Code: code, Timeout: time.Minute}}})
			if res.Status != StatusOK || c.Output() != "met\n" {
				t.Errorf("session %s: %s %q; the two sessions did not run at once", id, res.Status, c.Output())
			}
		})
	}
	wg.Wait()
}

// Two requests to one session run one after the other: the second is seen
// queued while the first holds its cell open, and when it runs it finds
// what the first wrote on leaving.
func TestSerialSession(t *testing.T) {
	r := newTestRegistry(t, Config{})
	dir := t.TempDir()
	in, release := testkit.Mkfifo(t, dir, "in"), testkit.Mkfifo(t, dir, "release")
	left := filepath.Join(dir, "first-left")
	first := "open(" + quote(in) + ", 'w').close()\nopen(" + quote(release) + ").read()\nopen(" + quote(left) + ", 'w').close()"
	second := "import os\nprint(os.path.exists(" + quote(left) + "))"
	req := func(code string) Request {
		return Request{Session: "one", Cwd: dir, Cells: []Cell{{Language: LangPython, Code: code, Timeout: time.Minute}}}
	}
	firstDone := make(chan Result, 1)
	go func() { res, _ := evalIn(t, r, req(first)); firstDone <- res }()
	if _, err := os.ReadFile(in); err != nil { // the first cell is running
		t.Fatal(err)
	}
	type outcome struct {
		res Result
		out string
	}
	secondDone := make(chan outcome, 1)
	go func() { res, c := evalIn(t, r, req(second)); secondDone <- outcome{res, c.Output()} }()
	// Either the second request queues behind the first, or (wrongly) it
	// runs beside it and ends while the first still holds its cell.
	waitFor(t, func() bool { return queued(r, "one") == 2 || len(secondDone) == 1 })
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if res := <-firstDone; res.Status != StatusOK {
		t.Errorf("first request: %s %+v", res.Status, res.Cells)
	}
	if o := <-secondDone; o.res.Status != StatusOK || o.out != "True\n" {
		t.Errorf("second request: %s %q; want it to run after the first left (True)", o.res.Status, o.out)
	}
}

// evalIn is eval for a goroutine of the test: an API error fails the test
// without ending the goroutine early.
func evalIn(t *testing.T, r *Registry, req Request) (Result, *collector) {
	c := &collector{}
	res, err := r.Eval(context.Background(), req, c.Cell)
	if err != nil {
		t.Errorf("Eval: %v", err)
	}
	return res, c
}

// queued is how many requests session id has queued or running.
func queued(r *Registry, id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, s := range r.sessions {
		if k.Session == id {
			s.mu.Lock()
			defer s.mu.Unlock()
			return s.queued
		}
	}
	return 0
}

func TestDeathRetriedOnce(t *testing.T) {
	r := newTestRegistry(t, Config{})
	dir := t.TempDir()
	marker := filepath.Join(dir, "died-once")
	// Dies the first time only: the retry finds the marker.
	once := "import os, signal\nif not os.path.exists(" + quote(marker) + "):\n    open(" + quote(marker) + ", 'w').close()\n    os.kill(os.getpid(), signal.SIGKILL)\nprint('survived')"
	res, c := eval(t, r, Request{Cwd: dir, Cells: []Cell{py("x = 1"), py(once)}})
	cell := res.Cells[1]
	if cell.Status != StatusOK || !cell.Retried || !cell.StateLost || !strings.Contains(c.Output(), "survived") {
		t.Fatalf("cell %+v output %q; want ok, retried, stateLost, survived", cell, c.Output())
	}
	res, c = eval(t, r, Request{Cwd: dir, Cells: []Cell{py("import os; os.kill(os.getpid(), 9)")}})
	cell = res.Cells[0]
	if cell.Status != StatusKilled || !cell.Retried || !strings.Contains(cell.Message, "interpreter died twice: signal: killed") {
		t.Fatalf("always-dying cell = %+v; want killed after retry with 'interpreter died twice'", cell)
	}
}

// A batch run's death (Batch) fails its cell at once and skips the rest,
// KeepGoing or not: the cell that would have survived a retry is not run
// again, nor is a later cell run on a fresh interpreter.
func TestDeathNotRetriedInABatch(t *testing.T) {
	for _, keepGoing := range []bool{false, true} {
		t.Run(fmt.Sprintf("keep going %v", keepGoing), func(t *testing.T) {
			r := newTestRegistry(t, Config{})
			dir := t.TempDir()
			marker := filepath.Join(dir, "died-once")
			once := "import os, signal\nif not os.path.exists(" + quote(marker) + "):\n    open(" + quote(marker) + ", 'w').close()\n    os.kill(os.getpid(), signal.SIGKILL)\nprint('survived')"
			res, c := eval(t, r, Request{Cwd: dir, Mode: ModePerCall, Batch: true, KeepGoing: keepGoing,
				Cells: []Cell{py("x = 1"), py(once), py("print('later', x)")}})
			if cell := res.Cells[1]; cell.Status != StatusKilled || cell.Retried || !cell.StateLost || !strings.Contains(cell.Message, "not retried") {
				t.Errorf("dying cell %+v; want killed, not retried, state lost", cell)
			}
			if cell := res.Cells[2]; cell.Status != StatusSkipped || !strings.Contains(cell.Message, "died in cell 2") {
				t.Errorf("later cell %+v; want skipped after the death", cell)
			}
			if out := c.Output(); strings.Contains(out, "survived") || strings.Contains(out, "later 1") {
				t.Errorf("output %q: a cell ran after the death", out)
			}
			if res.Status != StatusKilled || res.FailedCell != 1 {
				t.Errorf("result %s, failed cell %d; want killed at 1", res.Status, res.FailedCell)
			}
			if n := len(c.PIDs()); n != 1 {
				t.Errorf("interpreters started = %d, want 1", n)
			}
		})
	}
}

func TestCancelledCellNotRetried(t *testing.T) {
	r := newTestRegistry(t, Config{Grace: 300 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := &collector{}
	// Cancel once the cell ignores SIGINT, not after a fixed delay: on a
	// loaded machine the interpreter may not even have started by then.
	emit := func(cell int, f frames.Frame) {
		c.Cell(cell, f)
		if f.Type == frames.TypeStdout && strings.Contains(f.Data, "spinning") {
			cancel()
		}
	}
	res, err := r.Eval(ctx, Request{Cells: []Cell{py("import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nprint('spinning', flush=True)\nwhile True: pass")}}, emit)
	if err != nil {
		t.Fatal(err)
	}
	cell := res.Cells[0]
	if cell.Status != StatusCancelled || cell.Retried || !cell.StateLost {
		t.Fatalf("cell = %+v; want cancelled, not retried, state lost", cell)
	}
	if len(c.PIDs()) != 1 {
		t.Fatalf("interpreters started = %d, want 1 (no retry)", len(c.PIDs()))
	}
}

func TestTimeout(t *testing.T) {
	r := newTestRegistry(t, Config{})
	res, c := eval(t, r, Request{Cells: []Cell{{Language: LangPython, Code: "print('before')\nwhile True: pass", Timeout: time.Second}}})
	cell := res.Cells[0]
	if cell.Status != StatusTimeout || !strings.Contains(c.Output(), "before") || !strings.Contains(c.Output(), "Command timed out after 1 seconds") {
		t.Fatalf("cell = %+v output %q; want timeout keeping earlier output", cell, c.Output())
	}
	res, c = eval(t, r, Request{Cells: []Cell{py("print('next cell runs')")}})
	if res.Status != StatusOK || !strings.Contains(c.Output(), "next cell runs") {
		t.Fatalf("after a timeout: %s %q", res.Status, c.Output())
	}
}

func TestEnvironmentFiltered(t *testing.T) {
	environ := append(os.Environ(), "OPENAI_API_KEY=sk-secret", "MY_SERVICE_TOKEN=t", "LC_EVALHOST_TEST=kept",
		"PI_PYTHON_GATEWAY_TOKEN=gw", "PI_SECRET_KEY=s", "HTTPS_PROXY=http://user:pw@proxy.invalid:3128")
	r := newTestRegistry(t, Config{Environ: environ, ExtraEnv: map[string]string{"PI_TOOL_BRIDGE_TOKEN": "bridge"}})
	code := "import os; print(sorted(k for k in ('OPENAI_API_KEY','MY_SERVICE_TOKEN','LC_EVALHOST_TEST','PI_TOOL_BRIDGE_TOKEN','PI_TOOL_BRIDGE_SESSION','PI_PYTHON_GATEWAY_TOKEN','PI_SECRET_KEY') if k in os.environ)); print(os.environ['HTTPS_PROXY'])"
	_, c := eval(t, r, Request{Session: "envtest", Cells: []Cell{py(code)}})
	if want := "['LC_EVALHOST_TEST', 'PI_TOOL_BRIDGE_SESSION', 'PI_TOOL_BRIDGE_TOKEN']\nhttp://proxy.invalid:3128\n"; c.Output() != want {
		t.Fatalf("visible variables %q, want %q", c.Output(), want)
	}
}

func TestVenvPickedUp(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("python3", "-m", "venv", "--without-pip", filepath.Join(dir, ".venv")).CombinedOutput(); err != nil {
		t.Skipf("cannot create a venv: %v %s", err, out)
	}
	r := newTestRegistry(t, Config{Getenv: func(string) string { return "" }})
	_, c := eval(t, r, Request{Cwd: dir, Cells: []Cell{py("import sys, os; print(sys.prefix); print(os.environ['PATH'].split(os.pathsep)[0])")}})
	want := filepath.Join(dir, ".venv")
	if lines := strings.Split(strings.TrimSpace(c.Output()), "\n"); len(lines) != 2 || lines[0] != want || lines[1] != filepath.Join(want, "bin") {
		t.Fatalf("prefix and PATH head = %q, want %s and its bin", c.Output(), want)
	}
}

func TestShellCells(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not on PATH")
	}
	r := newTestRegistry(t, Config{})
	res, c := eval(t, r, Request{Cells: []Cell{sh("cd /tmp"), sh("pwd")}})
	if res.Status != StatusOK || !strings.Contains(c.Output(), "/tmp") {
		t.Fatalf("cd not kept: %s %q", res.Status, c.Output())
	}
	res, c = eval(t, r, Request{KeepGoing: true, Cells: []Cell{sh("exit 3"), sh("echo fresh; pwd")}})
	if res.Cells[0].Status != StatusError || !res.Cells[0].StateLost || !strings.Contains(c.Output(), "3") {
		t.Fatalf("exit 3 cell = %+v output %q; want an error that says the shell's state is gone", res.Cells[0], c.Output())
	}
	// A new shell starts in the session's cwd, not in the /tmp the old one had cd'd to.
	wd, _ := os.Getwd()
	if res.Cells[1].Status != StatusOK || !strings.Contains(c.Output(), "fresh\n"+wd+"\n") {
		t.Fatalf("next cell did not run in a new shell: %+v %q", res.Cells[1], c.Output())
	}
}

func TestBadRequests(t *testing.T) {
	r := newTestRegistry(t, Config{})
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o644)
	tests := []struct {
		name string
		req  Request
		want string
	}{
		{"no cells", Request{}, "at least one cell"},
		{"bad language", Request{Cells: []Cell{{Language: "ruby"}}}, `language "ruby"`},
		{"bad mode", Request{Mode: "forever", Cells: []Cell{py("1")}}, `mode "forever"`},
		{"missing cwd", Request{Cwd: "/no/such/dir", Cells: []Cell{py("1")}}, "/no/such/dir"},
		{"cwd is a file", Request{Cwd: file, Cells: []Cell{py("1")}}, "not a directory"},
		{"a shell cell's module", Request{Cells: []Cell{{Language: LangShell, Module: "m"}}}, "a module runs in a Python cell"},
		// The runner would run the module, a gateway kernel the code.
		{"a module and code", Request{Cells: []Cell{{Language: LangPython, Code: "print(1)", Module: "m"}}}, "code or a module"},
		// It goes into the interpreter's environment: one this long failed
		// its start with "argument list too long".
		{"a session id too long", Request{Session: strings.Repeat("s", 200_000), Cells: []Cell{py("1")}}, "the session id is 200000 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.Eval(context.Background(), tt.req, nil)
			if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Eval = %v, want ErrBadRequest naming %q", err, tt.want)
			}
		})
	}
}

// A request cancelled while it waits in the queue still reports every cell.
func TestCancelledWhileQueued(t *testing.T) {
	r := newTestRegistry(t, Config{})
	dir := t.TempDir()
	busy := make(chan struct{})
	go func() {
		defer close(busy)
		r.Eval(context.Background(), Request{Session: "q", Cwd: dir, Cells: []Cell{py("import time; time.sleep(1)")}}, nil)
	}()
	waitBusy(t, r, "q")
	ctx, cancel := context.WithCancel(context.Background())
	var ended []Status
	job, err := r.Queue(Request{Session: "q", Cwd: dir, Cells: []Cell{py("1"), py("2")},
		OnCellEnd: func(c CellResult) { ended = append(ended, c.Status) }})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	res, err := job.Run(ctx, nil)
	<-busy
	if err != nil || res.Status != StatusCancelled || len(ended) != 2 || ended[0] != StatusCancelled {
		t.Fatalf("queued-then-cancelled: %+v %v, cell ends %v", res, err, ended)
	}
}

// A cancel that lands before the runner started the cell still interrupts
// it, instead of waiting out the grace window and killing the interpreter.
func TestCancelRightAfterSubmit(t *testing.T) {
	r := newTestRegistry(t, Config{Grace: 3 * time.Second})
	eval(t, r, Request{Cells: []Cell{py("warm = 1")}})
	for i := range 10 {
		ctx, cancel := context.WithCancel(context.Background())
		job, err := r.Queue(Request{Cells: []Cell{py("import time; time.sleep(30)")}})
		if err != nil {
			t.Fatal(err)
		}
		go func() { time.Sleep(time.Duration(i) * 100 * time.Microsecond); cancel() }()
		res, err := job.Run(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if c := res.Cells[0]; c.Status != StatusCancelled || c.StateLost {
			t.Fatalf("attempt %d: %+v; want cancelled by interrupt with state kept", i, c)
		}
	}
	if _, c := eval(t, r, Request{Cells: []Cell{py("print(warm)")}}); !strings.Contains(c.Output(), "1") {
		t.Fatalf("state lost after cancels: %q", c.Output())
	}
}

func TestMemoryGuardRecycles(t *testing.T) {
	r := newTestRegistry(t, Config{MaxRSS: 64 << 20})
	res, c := eval(t, r, Request{Cells: []Cell{py("small = 1"), py("big = bytearray(200 * 1024 * 1024)"), py("print('big' in globals(), 'small' in globals())")}})
	if res.Status != StatusOK {
		t.Fatalf("status %s: %q", res.Status, c.Output())
	}
	if res.Cells[0].Recycled || !res.Cells[1].Recycled || !res.Cells[1].StateLost {
		t.Fatalf("recycled flags %v %v; want only the cell that grew past the limit", res.Cells[0].Recycled, res.Cells[1].Recycled)
	}
	if !strings.Contains(c.Output(), "over the 64 MB limit") || !strings.Contains(c.Output(), "False False") {
		t.Fatalf("output %q; want the recycle notice and a fresh interpreter after it", c.Output())
	}
}

// A reset finds the session whatever engine it runs (here full IPython
// mode, part of the session's key), and resetting no session is a no-op.
func TestResetFindsSessionByIDAndCwd(t *testing.T) {
	testkit.NeedModuleIn(t, "python3", "IPython", "ipython") // the sessions' interpreter
	r := newTestRegistry(t, Config{})
	dir := t.TempDir()
	req := Request{Session: "ip", Cwd: dir, IPython: true, Cells: []Cell{py("v = 1")}}
	if res, c := eval(t, r, req); res.Status != StatusOK {
		t.Fatalf("%s %q", res.Status, c.Output())
	}
	if err := r.Reset(context.Background(), "ip", dir); err != nil {
		t.Fatal(err)
	}
	req.Cells = []Cell{py("print('v' in globals())")}
	if _, c := eval(t, r, req); !strings.Contains(c.Output(), "False") {
		t.Fatalf("state after reset: %q", c.Output())
	}
	if err := r.Reset(context.Background(), "nobody", dir); err != nil || len(r.Sessions()) != 1 {
		t.Fatalf("reset of a missing session: %v, %d sessions", err, len(r.Sessions()))
	}
}

// A request whose context is already cancelled never disturbs the
// interpreter: whether it stops in the queue or just after, state stays.
func TestCancelledBeforeSend(t *testing.T) {
	r := newTestRegistry(t, Config{})
	eval(t, r, Request{Cells: []Cell{py("kept = 42\nran = 0")}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for i := range 30 {
		res, err := r.Eval(ctx, Request{Cells: []Cell{py("ran += 1")}}, nil)
		if err != nil || res.Cells[0].Status != StatusCancelled || res.Cells[0].StateLost {
			t.Fatalf("attempt %d: %+v %v; want cancelled with state kept", i, res.Cells[0], err)
		}
	}
	if _, c := eval(t, r, Request{Cells: []Cell{py("print('ran', ran)")}}); !strings.Contains(c.Output(), "ran 0") {
		t.Fatalf("a cancelled request's cell ran: %q", c.Output())
	}
	if _, c := eval(t, r, Request{Cells: []Cell{py("print(kept)")}}); !strings.Contains(c.Output(), "42") {
		t.Fatalf("state lost: %q", c.Output())
	}
}

// cancelOnSend plays a cancel that lands between the registry's last check
// and the backend's: it cancels the request just before handing it on.
type cancelOnSend struct {
	Executor
	cancel *context.CancelFunc
}

func (e cancelOnSend) Execute(ctx context.Context, req frames.Request, emit func(frames.Frame)) (frames.Frame, error) {
	if *e.cancel != nil {
		(*e.cancel)()
	}
	return e.Executor.Execute(ctx, req, emit)
}

// A backend that refuses a cell because its context ended has not run it:
// the cell is cancelled and the interpreter, with its state, is kept.
func TestCancelledAtSendKeepsInterpreter(t *testing.T) {
	home := t.TempDir()
	var cancel context.CancelFunc
	start := RunnerStarter(home)
	r := newTestRegistry(t, Config{Home: home, Starters: map[string]Starter{LangPython: func(ctx context.Context, spec Spec) (Executor, error) {
		ex, err := start(ctx, spec)
		if err != nil {
			return nil, err
		}
		return cancelOnSend{ex, &cancel}, nil
	}}})
	_, c := eval(t, r, Request{Cells: []Cell{py("kept = 42\nimport os; print(os.getpid())")}})
	pid := strings.TrimSpace(c.Output())
	ctx, cancelReq := context.WithCancel(context.Background())
	cancel = cancelReq
	res, err := r.Eval(ctx, Request{Cells: []Cell{py("kept = 0")}}, nil)
	cancel = nil
	if err != nil || res.Cells[0].Status != StatusCancelled || res.Cells[0].StateLost {
		t.Fatalf("cancelled at send: %+v %v; want cancelled with state kept", res.Cells[0], err)
	}
	if _, c := eval(t, r, Request{Cells: []Cell{py("import os; print(kept, os.getpid())")}}); strings.TrimSpace(c.Output()) != "42 "+pid {
		t.Fatalf("after the cancelled cell: %q; want the same interpreter (pid %s) with kept = 42", c.Output(), pid)
	}
}

// A cell's timeout counts its own run, not the interpreter's start: an
// extension module that makes the start take 1.5 s does not time out a
// 1 s cell that runs at once.
func TestTimeoutExcludesInterpreterStart(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "modules"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "modules", "slow.py"), []byte("import time\ntime.sleep(1.5)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r := newTestRegistry(t, Config{Home: home})
	res, c := eval(t, r, Request{Cells: []Cell{{Language: LangPython, Code: "print('ran')", Timeout: time.Second}}})
	if res.Status != StatusOK || !strings.Contains(c.Output(), "ran") {
		t.Fatalf("cell after a slow start: %+v %q; want ok", res.Cells[0], c.Output())
	}
}

// Closing a busy session stops its running cell, ends the requests queued on
// it cancelled with a message saying why, and a request with its id made
// right after starts a fresh session instead of meeting the closed one
// (not told of the loss: closing was asked for).
func TestCloseBusySession(t *testing.T) {
	r := newTestRegistry(t, Config{Grace: 500 * time.Millisecond})
	dir := t.TempDir()
	eval(t, r, Request{Session: "c", Cwd: dir, Cells: []Cell{py("keep = 1")}})
	reqs := []Request{
		{Session: "c", Cwd: dir, Cells: []Cell{py("import time\nprint('started', flush=True)\ntime.sleep(60)")}},
		{Session: "c", Cwd: dir, Cells: []Cell{py("print('never')")}},
	}
	results := make([]Result, len(reqs))
	started := make(chan struct{})
	var wg sync.WaitGroup
	for i, req := range reqs {
		job, err := r.Queue(req)
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var once sync.Once
			results[i], _ = job.Run(context.Background(), func(_ int, f frames.Frame) {
				if f.Type == frames.TypeStdout {
					once.Do(func() { close(started) })
				}
			})
		}()
	}
	<-started
	if !r.CloseSession("c") {
		t.Fatal("CloseSession found no session")
	}
	fresh, c := eval(t, r, Request{Session: "c", Cwd: dir, Cells: []Cell{py("print('keep' in globals())")}})
	wg.Wait()
	tests := []struct {
		name      string
		got       CellResult
		status    Status
		stateLost bool
		message   string
	}{
		{"running cell is stopped and says its state is gone", results[0].Cells[0], StatusKilled, true, "its state is gone"},
		{"queued request ends cancelled, saying the session was closed", results[1].Cells[0], StatusCancelled, false, "the session was closed"},
		{"a request after the close starts a fresh session", fresh.Cells[0], StatusOK, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got.Status != tt.status || tt.got.StateLost != tt.stateLost || !strings.Contains(tt.got.Message, tt.message) {
				t.Fatalf("%+v; want status %s, stateLost %v, message with %q", tt.got, tt.status, tt.stateLost, tt.message)
			}
		})
	}
	if !strings.Contains(c.Output(), "False") || strings.Contains(c.Output(), "state lost") {
		t.Fatalf("the fresh session saw the closed one's state, or was told of a close its user asked for: %q", c.Output())
	}
}

// A request id a client reuses gets a new run id each time (the tool
// bridge accepts calls under it), and the cell sees its own in EVALHOST_RUN.
func TestRunIDsAreNotReused(t *testing.T) {
	var mu sync.Mutex
	var runs []string
	r := newTestRegistry(t, Config{RunHook: func(run RunInfo, active bool) {
		if active {
			mu.Lock()
			runs = append(runs, run.Run)
			mu.Unlock()
		}
	}})
	var seen []string
	for range 2 {
		_, c := eval(t, r, Request{ID: "same", Session: "s1", Cells: []Cell{py("import os; print(os.environ['EVALHOST_RUN'])")}})
		seen = append(seen, strings.TrimSpace(c.Output()))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(runs) != 2 || runs[0] == runs[1] || !strings.HasPrefix(runs[0], "same-0-") {
		t.Fatalf("run ids %q; want two different ids for the reused request id", runs)
	}
	if seen[0] != runs[0] || seen[1] != runs[1] {
		t.Fatalf("cells saw %q, hooks got %q", seen, runs)
	}
}
