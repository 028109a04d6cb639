package sessions

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// A request that relied on a session's state is told when someone else
// ended it: its cell says "state lost", why, and stateLost, and runs in a
// fresh interpreter (x is gone). Each case sets x = 1 in session s, ends
// the state its own way, and then asks for x.
func TestStateLossToldToTheNextRequest(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		// lose ends the state of session s in dir, which holds x = 1.
		lose func(t *testing.T, r *Registry, dir string)
		why  string
	}{
		{"killed", Config{}, func(t *testing.T, r *Registry, dir string) { r.KillSession("s") }, whyKilled},
		{"closed", Config{}, func(t *testing.T, r *Registry, dir string) { r.CloseSession("s") }, whyClosed},
		{"reset", Config{}, func(t *testing.T, r *Registry, dir string) {
			if err := r.Reset(context.Background(), "s", dir); err != nil {
				t.Fatal(err)
			}
		}, whyReset},
		{"evicted", Config{MaxSessions: 1}, func(t *testing.T, r *Registry, dir string) {
			eval(t, r, Request{Session: "other", Cwd: dir, Cells: []Cell{py("1")}})
		}, "was closed to keep at most 1 sessions open"},
		{"idle", Config{IdleTimeout: time.Second}, func(t *testing.T, r *Registry, dir string) {
			waitFor(t, func() bool { return len(r.Sessions()) == 0 })
		}, "was closed after 1s idle"},
		{"noted", Config{}, func(t *testing.T, r *Registry, dir string) {
			r.CloseSession("s") // as a new background process would have none
			r.lost = lossMemory{}
			r.NoteLost("s", "ended with the background process")
		}, "ended with the background process"},
		{"ended between cells", Config{}, func(t *testing.T, r *Registry, dir string) {
			eval(t, r, Request{Session: "s", Cwd: dir, Cells: []Cell{py("import os, threading\nthreading.Timer(0.1, os._exit, (3,)).start()")}})
			waitFor(t, func() bool {
				ss := r.Sessions()
				return len(ss) == 1 && len(ss[0].Languages) == 0
			})
		}, whyEndedBetween},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRegistry(t, tc.cfg)
			dir := t.TempDir()
			if res, c := eval(t, r, Request{Session: "s", Cwd: dir, Cells: []Cell{py("x = 1")}}); res.Status != StatusOK {
				t.Fatalf("x = 1: %s %q", res.Status, c.Output())
			}
			tc.lose(t, r, dir)
			res, c := eval(t, r, Request{Session: "s", Cwd: dir, Cells: []Cell{py("print(x)"), py("print('again')")}, KeepGoing: true})
			first := res.Cells[0]
			want := "[state lost: session s's py interpreter " + tc.why
			if !first.StateLost || !strings.Contains(c.Output(), want) || !strings.Contains(c.Output(), "NameError") {
				t.Fatalf("cell after the loss: %+v, output %q; want stateLost and %q", first, c.Output(), want)
			}
			if res.Cells[1].StateLost || strings.Count(c.Output(), "state lost") != 1 {
				t.Errorf("the request's second cell was told again: %+v, output %q", res.Cells[1], c.Output())
			}
			// Told once: the next request relies on the new interpreter.
			if res, c := eval(t, r, Request{Session: "s", Cwd: dir, Cells: []Cell{py("1")}}); res.Cells[0].StateLost || strings.Contains(c.Output(), "state lost") {
				t.Errorf("the request after: %+v, output %q; want no loss told", res.Cells[0], c.Output())
			}
		})
	}
}

// A request queued behind a cell that another command killed (its second
// Ctrl-C) is told when it runs: the loss happened while it waited.
func TestStateLossToldToAQueuedRequest(t *testing.T) {
	r := newTestRegistry(t, Config{Grace: 200 * time.Millisecond})
	dir := t.TempDir()
	if res, _ := eval(t, r, Request{Session: "s", Cwd: dir, Cells: []Cell{py("x = 1")}}); res.Status != StatusOK {
		t.Fatal(res.Status)
	}
	in := mkfifo(t, dir, "in")
	hold := "open(" + quote(in) + ", 'w').close()\nimport time\ntime.sleep(60)"
	first := make(chan Result, 1)
	go func() {
		res, _ := evalIn(t, r, Request{Session: "s", Cwd: dir, Cells: []Cell{{Language: LangPython, Code: hold, Timeout: time.Minute}}})
		first <- res
	}()
	if _, err := os.ReadFile(in); err != nil { // the first cell runs
		t.Fatal(err)
	}
	job, err := r.Queue(Request{Session: "s", Cwd: dir, Cells: []Cell{py("print(x)")}})
	if err != nil {
		t.Fatal(err)
	}
	r.KillSession("s")
	if res := <-first; res.Cells[0].Status == StatusOK || !res.Cells[0].StateLost {
		t.Fatalf("killed cell: %+v", res.Cells[0])
	}
	c := &collector{}
	res, err := job.Run(context.Background(), c.Cell)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cells[0].StateLost || !strings.Contains(c.Output(), "state lost: session s's py interpreter "+whyKilled) {
		t.Fatalf("queued request: %+v, output %q; want the kill told", res.Cells[0], c.Output())
	}
}

// A request's own losses are not told to it again: a reset cell (of any
// language), a timeout that killed its interpreter. Nor is a first start.
func TestOwnStateLossNotToldAgain(t *testing.T) {
	r := newTestRegistry(t, Config{Grace: 200 * time.Millisecond})
	dir := t.TempDir()
	stubborn := Cell{Language: LangPython, Timeout: time.Second,
		Code: "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(30)"}
	cases := []struct {
		name  string
		cells []Cell
	}{
		{"first start", []Cell{py("1"), sh("true")}},
		{"reset cell", []Cell{sh("true"), {Language: LangPython, Code: "x = 2", Reset: true}, sh("echo after")}},
		{"timeout kill", []Cell{py("x = 1"), stubborn, py("print('after')")}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, c := eval(t, r, Request{Session: tc.name, Cwd: dir, Cells: tc.cells, KeepGoing: true})
			if strings.Contains(c.Output(), "state lost:") {
				t.Fatalf("output %q (%+v); a request was told of its own loss", c.Output(), res.Cells)
			}
		})
	}
}
