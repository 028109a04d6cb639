package backendtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
)

func testReady(t *testing.T, _ Backend, ex backend.Executor) {
	if r := ex.Ready(); r.Type != frames.TypeReady {
		t.Errorf("Ready() = %+v, want a ready frame", r)
	}
	if !ex.Alive() {
		t.Errorf("not Alive after start")
	}
	select {
	case <-ex.Done():
		t.Errorf("Done closed after start")
	default:
	}
}

func testFrames(t *testing.T, b Backend, ex backend.Executor) {
	c := ok(t, ex, "frames", b.Lang.Print("hello", "oops"))
	wantContains(t, "stdout", c.text(frames.TypeStdout), "hello\n")
	errText := c.text(frames.TypeStderr)
	if b.Lang.Merged {
		errText = c.text(frames.TypeStdout)
	}
	wantContains(t, "stderr", errText, "oops\n")
}

func testGeneratedID(t *testing.T, b Backend, ex backend.Executor) {
	c := ok(t, ex, "", b.Lang.Print("x", "y"))
	if c.done.ID == "" {
		t.Errorf("done frame has no id for a request without one")
	}
}

func testFail(t *testing.T, b Backend, ex backend.Executor) {
	c := exec(t, ex, context.Background(), frames.Request{ID: "fail", Code: b.Lang.Fail}, nil)
	if c.err != nil || c.done.Status != "error" {
		t.Fatalf("failing cell: status %q, err %v; want status error and no error", c.done.Status, c.err)
	}
	if !ex.Alive() {
		t.Errorf("a failed cell ended the interpreter")
	}
}

func testState(t *testing.T, b Backend, ex backend.Executor) {
	ok(t, ex, "set", b.Lang.Set)
	wantContains(t, "stdout", ok(t, ex, "get", b.Lang.Get).text(frames.TypeStdout), "kept\n")
}

func testCwdEnv(t *testing.T, b Backend, ex backend.Executor) {
	dir := tempDir(t)
	// A value longer than a terminal's line (4096 bytes): typed on an sh
	// cell's line, it was cut and the cell never ended.
	long := strings.Repeat("v", 5000)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang fails here, not at the watchdog
	defer cancel()
	c := exec(t, ex, ctx, frames.Request{ID: "where", Code: b.Lang.Where, Cwd: dir,
		Env: map[string]*string{"BACKENDTEST_VAR": new("from-request"), "BACKENDTEST_LONG": &long}}, nil)
	if c.err != nil || c.done.Status != "ok" || c.done.Cancelled {
		t.Fatalf("status %q, err %v; frames %v", c.done.Status, c.err, c.frames)
	}
	wantContains(t, "stdout", c.text(frames.TypeStdout), dir+"\nfrom-request\n")
}

func testArgv(t *testing.T, b Backend, ex backend.Executor) {
	// An argument longer than a terminal's line (4096 bytes), as a long
	// list of files or a JSON payload makes: typed on an sh cell's line, it
	// was cut and the cell never ended.
	long := strings.Repeat("x", 5000)
	argv := []string{"script", "a b", "--x", "'$HOME\"\n", long}
	args := func(id string, argv []string) string {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // a hang fails here, not at the watchdog
		defer cancel()
		c := exec(t, ex, ctx, frames.Request{ID: id, Code: b.Lang.Args, Argv: argv, File: "/nowhere/script"}, nil)
		if c.err != nil || c.done.Status != "ok" || c.done.Cancelled {
			t.Fatalf("%s: status %q, err %v; frames %v", id, c.done.Status, c.err, c.frames)
		}
		return c.text(frames.TypeStdout)
	}
	want := strings.Join(argv[1:], "\n") + "\n"
	if got := args("args", argv); !strings.Contains(got, want) {
		t.Errorf("stdout %q, want the arguments after the first, one per line: %q", got, want)
	}
	// Without Argv a request's cells see the command line as it was left,
	// so the sessions layer can set it once for a request's cells.
	if got := args("kept", nil); !strings.Contains(got, want) {
		t.Errorf("a request without argv: stdout %q, want the earlier arguments %q", got, want)
	}
	if got := args("none", []string{"script"}); strings.TrimSpace(got) != "" {
		t.Errorf("argv of the script alone: stdout %q, want no arguments", got)
	}
	// Bytes that are not UTF-8 arrive as the OS gave them: python3 decodes
	// them with os.fsdecode (0xff is '\udcff', which os.fsencode undoes),
	// bash keeps them.
	c := exec(t, ex, context.Background(), frames.Request{ID: "bytes", Code: b.Lang.ArgBytes, Argv: []string{"script", "a\xffb", "\xe2\x82"}}, nil)
	if got, want := c.text(frames.TypeStdout), "61ff62\ne282\n"; c.err != nil || got != want {
		t.Errorf("invalid UTF-8 arguments: stdout %q (err %v), want their bytes %q; frames %v", got, c.err, want, c.frames)
	}
}

// testScriptDir: a request's argv gives the module search path python3's
// for that command line: a file's directory (links resolved) first, so
// the script's sibling modules import, and neither the cwd nor "" (the
// notebook's entries: a json.py in the cwd must not shadow the stdlib's);
// "" first for -c, once; the cwd's full path for -m. A later request's
// argv takes back what an earlier one set; one without argv keeps it.
func testScriptDir(t *testing.T, b Backend, ex backend.Executor) {
	if b.Lang.Path == "" {
		t.Skip("no module search path")
	}
	dir, other := tempDir(t), tempDir(t)
	link := filepath.Join(tempDir(t), "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	path := func(id string, req frames.Request) []string {
		req.ID, req.Code = id, b.Lang.Path
		c := exec(t, ex, context.Background(), req, nil)
		if c.err != nil || c.done.Status != "ok" {
			t.Fatalf("%s: status %q, err %v; frames %v", id, c.done.Status, c.err, c.frames)
		}
		return strings.Split(strings.TrimRight(c.text(frames.TypeStdout), "\n"), "\n")
	}
	empties := func(p []string) int {
		return len(slices.DeleteFunc(slices.Clone(p), func(e string) bool { return e != "" }))
	}
	if got := path("script", frames.Request{Argv: []string{"s.py"}, File: filepath.Join(link, "s.py")}); got[0] != dir || empties(got) != 0 {
		t.Errorf("a script's path %q, want its directory first, links resolved (%q), and no ''", got, dir)
	}
	if got := path("-c in its directory", frames.Request{Cwd: dir, Argv: []string{"-c"}}); got[0] != "" || empties(got) != 1 || slices.Contains(got, dir) {
		t.Errorf("-c in the script's directory: the path %q, want one '', first, and not the cwd %q (as python3 -c)", got, dir)
	}
	if got := path("another script", frames.Request{Argv: []string{"s.py"}, File: filepath.Join(other, "s.py")}); got[0] != other || slices.Contains(got, dir) || empties(got) != 0 {
		t.Errorf("another script: the path %q, want %q first, not the cwd %q, no ''", got, other, dir)
	}
	if got := path("-c", frames.Request{Argv: []string{"-c"}}); got[0] != "" || empties(got) != 1 || slices.Contains(got, other) || slices.Contains(got, dir) {
		t.Errorf("-c: the path %q, want one '', first (as python3 -c), without %q or the cwd %q", got, other, dir)
	}
	if got := path("-m", frames.Request{Argv: []string{"-m"}}); got[0] != dir || empties(got) != 0 || slices.Contains(got[1:], dir) {
		t.Errorf("-m: the path %q, want the cwd %q first, once, and no ''", got, dir)
	}
	if got := path("without argv", frames.Request{}); got[0] != dir || empties(got) != 0 {
		t.Errorf("a request without argv: the path %q, want -m's kept", got)
	}
}

func testExitRefused(t *testing.T, b Backend, ex backend.Executor) {
	_, err := ex.Execute(context.Background(), frames.Request{ID: "exit", Exit: true}, func(frames.Frame) {})
	if err == nil {
		t.Errorf("an exit request ran as a cell; want an error")
	}
	if !ex.Alive() {
		t.Fatalf("an exit request ended the interpreter")
	}
	ok(t, ex, "after-exit", b.Lang.Get)
}

func testIdleInterrupt(t *testing.T, b Backend, ex backend.Executor) {
	if err := ex.Interrupt(); err != nil {
		t.Errorf("Interrupt while idle: %v", err)
	}
	wantContains(t, "stdout", ok(t, ex, "after-interrupt", b.Lang.Get).text(frames.TypeStdout), "kept\n")
}

func testBusy(t *testing.T, b Backend, ex backend.Executor) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var busyErr error
	c := exec(t, ex, ctx, frames.Request{ID: "long", Code: b.Lang.Sleep}, whenPrinted("sleeping", func() {
		// From another goroutine, as a second caller would.
		var wg sync.WaitGroup
		wg.Go(func() {
			_, busyErr = ex.Execute(context.Background(), frames.Request{ID: "second", Code: b.Lang.Get}, func(frames.Frame) {})
		})
		wg.Wait()
		cancel()
	}))
	if !errors.Is(busyErr, backend.ErrBusy) {
		t.Errorf("second Execute: %v, want ErrBusy", busyErr)
	}
	if c.err != nil || !c.done.Cancelled {
		t.Errorf("first cell: done %+v, err %v; want cancelled", c.done, c.err)
	}
}

func testCancel(t *testing.T, b Backend, ex backend.Executor) {
	ok(t, ex, "set-before-cancel", b.Lang.Set)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := exec(t, ex, ctx, frames.Request{ID: "cancelled", Code: b.Lang.Sleep}, whenPrinted("sleeping", cancel))
	if c.err != nil {
		t.Fatalf("cancelled cell: %v; want its done frame and no error", c.err)
	}
	if !c.done.Cancelled {
		t.Errorf("done %+v, want Cancelled", c.done)
	}
	wantContains(t, "stdout", c.text(frames.TypeStdout), "sleeping")
	if !ex.Alive() {
		t.Fatalf("the interpreter ended after an interrupt it obeyed")
	}
	wantContains(t, "stdout", ok(t, ex, "after-cancel", b.Lang.Get).text(frames.TypeStdout), "kept\n")
}

func testIgnored(t *testing.T, b Backend, ex backend.Executor) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var cancelled time.Time // set on this goroutine: emit runs on Execute's
	c := exec(t, ex, ctx, frames.Request{ID: "ignores", Code: b.Lang.Ignore}, whenPrinted("spinning", func() {
		cancelled = time.Now()
		cancel()
	}))
	if !errors.Is(c.err, backend.ErrKilled) {
		t.Errorf("cell ignoring its interrupt: done %+v, err %v; want ErrKilled", c.done, c.err)
	}
	// A lower bound only (load makes the kill later, never sooner): a kill
	// before the grace fails; one that never comes hangs to the watchdog.
	if took := time.Since(cancelled); !cancelled.IsZero() && took < grace {
		t.Errorf("killed %v after the cancel, before the grace (%v) had run", took, grace)
	}
	wantContains(t, "stdout", c.text(frames.TypeStdout), "spinning")
	wantEnded(t, ex)
}

func testDeath(t *testing.T, b Backend, ex backend.Executor) {
	c := exec(t, ex, context.Background(), frames.Request{ID: "dies", Code: b.Lang.Die}, nil)
	var death *backend.DeathError
	if !errors.Is(c.err, backend.ErrDied) || !errors.As(c.err, &death) {
		t.Fatalf("cell that killed its interpreter: done %+v, err %v; want a *DeathError", c.done, c.err)
	}
	if death.How() == "" {
		t.Errorf("DeathError.How is empty")
	}
	wantContains(t, "stdout", c.text(frames.TypeStdout), "dying")
	wantEnded(t, ex)
}

func testKillDuring(t *testing.T, b Backend, ex backend.Executor) {
	// Kill runs beside the cell, not inside emit, which must not call it.
	printed := make(chan struct{})
	var killErr error
	var wg sync.WaitGroup
	wg.Go(func() {
		<-printed
		killErr = ex.Kill()
	})
	c := exec(t, ex, context.Background(), frames.Request{ID: "killed", Code: b.Lang.Sleep},
		whenPrinted("sleeping", func() { close(printed) }))
	select {
	case <-printed:
	default:
		close(printed) // the cell ended without printing; Kill anyway
	}
	wg.Wait()
	if killErr != nil {
		t.Errorf("Kill: %v", killErr)
	}
	if c.err == nil {
		t.Errorf("cell whose interpreter was killed: done %+v and no error", c.done)
	}
	wantEnded(t, ex)
	if err := ex.Kill(); err != nil {
		t.Errorf("second Kill: %v", err)
	}
}

func testClose(t *testing.T, b Backend, ex backend.Executor) {
	ok(t, ex, "before-close", b.Lang.Set)
	if err := ex.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wantEnded(t, ex)
	if err := ex.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := ex.Kill(); err != nil {
		t.Errorf("Kill after Close: %v", err)
	}
}
