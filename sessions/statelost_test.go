package sessions

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/testkit"
)

// A loss that no request caused or saw is told to the next request of
// the session, however long after: its cell says "state lost", why, and
// stateLost, and runs in a fresh interpreter (x is gone). A loss someone
// asked for, or that a request's own cell caused, is not news to a request
// queued after it (that one was told, or asked). Each case sets x = 1 in
// session s, ends the state its own way, and then asks for x.
func TestStateLossToldToTheNextRequest(t *testing.T) {
	stubborn := "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(30)"
	cases := []struct {
		name string
		cfg  Config
		// lose ends the state of session s in dir, which holds x = 1.
		lose func(t *testing.T, r *Registry, dir string)
		why  string // "": not told
	}{
		{"evicted", Config{MaxSessions: 1}, func(t *testing.T, r *Registry, dir string) {
			eval(t, r, Request{Session: "other", Cwd: dir, Cells: []Cell{py("1")}})
		}, "was closed to keep at most 1 session open"},
		{"idle", Config{IdleTimeout: time.Second}, func(t *testing.T, r *Registry, dir string) {
			waitFor(t, func() bool { return len(r.Sessions()) == 0 })
		}, "was closed after 1s idle"},
		{"noted", Config{}, func(t *testing.T, r *Registry, dir string) {
			held := r.Untold()
			r.CloseSession("s") // as a new background process would have none
			if len(held) != 1 || held[0].Why != "" || fmt.Sprint(held[0].Languages) != "[py]" {
				t.Fatalf("Untold = %+v; want s's live py state", held)
			}
			held[0].Why = "ended with the background process"
			r.NoteLost(held[0])
		}, "ended with the background process"},
		{"ended between cells", Config{}, func(t *testing.T, r *Registry, dir string) {
			eval(t, r, Request{Session: "s", Cwd: dir, Cells: []Cell{py("import os, threading\nthreading.Timer(0.1, os._exit, (3,)).start()")}})
			waitFor(t, func() bool {
				ss := r.Sessions()
				return len(ss) == 1 && len(ss[0].Languages) == 0
			})
		}, whyEndedBetween},
		{"killed", Config{}, func(t *testing.T, r *Registry, dir string) { r.KillSession("s") }, ""},
		{"closed", Config{}, func(t *testing.T, r *Registry, dir string) { r.CloseSession("s") }, ""},
		{"reset", Config{}, func(t *testing.T, r *Registry, dir string) {
			if err := r.Reset(context.Background(), "s", dir); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"own death", Config{}, func(t *testing.T, r *Registry, dir string) {
			eval(t, r, Request{Session: "s", Cwd: dir, Cells: []Cell{py("import os; os._exit(1)")}})
		}, ""},
		{"own timeout", Config{Grace: 200 * time.Millisecond}, func(t *testing.T, r *Registry, dir string) {
			eval(t, r, Request{Session: "s", Cwd: dir, Cells: []Cell{{Language: LangPython, Code: stubborn, Timeout: time.Second}}})
		}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRegistry(t, tc.cfg)
			dir := t.TempDir()
			if res, c := eval(t, r, Request{Session: "s", Cwd: dir, Cells: []Cell{py("x = 1")}}); res.Status != StatusOK {
				t.Fatalf("x = 1: %s %q", res.Status, c.Output())
			}
			tc.lose(t, r, dir)
			res, c := eval(t, r, Request{Session: "s", Cwd: dir, Cells: []Cell{py("print(x)"), py("print('again')"), sh("true")}, KeepGoing: true})
			if !strings.Contains(c.Output(), "NameError") {
				t.Fatalf("the state was not lost: %q", c.Output())
			}
			if tc.why == "" {
				if res.Cells[0].StateLost || strings.Contains(c.Output(), "state lost") {
					t.Fatalf("told of a loss it asked for or was told of: %+v, output %q", res.Cells[0], c.Output())
				}
				return
			}
			want := "[state lost: session s's py interpreter " + tc.why
			if !res.Cells[0].StateLost || !strings.Contains(c.Output(), want) {
				t.Fatalf("cell after the loss: %+v, output %q; want stateLost and %q", res.Cells[0], c.Output(), want)
			}
			// Once, and only for the languages that held state.
			if res.Cells[1].StateLost || res.Cells[2].StateLost || strings.Count(c.Output(), "state lost") != 1 {
				t.Errorf("told again: %+v, output %q", res.Cells[1:], c.Output())
			}
			if res, c := eval(t, r, Request{Session: "s", Cwd: dir, Cells: []Cell{py("1")}}); res.Cells[0].StateLost || strings.Contains(c.Output(), "state lost") {
				t.Errorf("the request after: %+v, output %q; want no loss told", res.Cells[0], c.Output())
			}
		})
	}
}

// A request queued while another's cell runs relies on the state that
// cell leaves; when that state is ended under it (the other command's
// second Ctrl-C, a death in its cell, a reset queued ahead), it is told.
// In "new session", the state is the running cell's own: the session had
// no interpreter when the request was queued.
func TestStateLossToldToAQueuedRequest(t *testing.T) {
	cases := []struct {
		name  string
		setup bool // x = 1 in a request before the running one
		dies  bool // the running cell kills its interpreter once released
		// end ends the state while the running cell waits on release,
		// then lets it go on; it queues the request that relies on x.
		end func(t *testing.T, r *Registry, dir string, release func(), queue func())
		why string
	}{
		{"second Ctrl-C", true, false, func(t *testing.T, r *Registry, dir string, release func(), queue func()) {
			queue()
			r.KillSession("s")
		}, whyKilled},
		{"new session", false, false, func(t *testing.T, r *Registry, dir string, release func(), queue func()) {
			queue()
			r.KillSession("s")
		}, whyKilled},
		{"death in its cell", true, true, func(t *testing.T, r *Registry, dir string, release func(), queue func()) {
			queue()
			release() // the running cell kills its interpreter, once
		}, "died (signal: killed) in another request's cell"},
		{"reset queued ahead", true, false, func(t *testing.T, r *Registry, dir string, release func(), queue func()) {
			go func() {
				if err := r.Reset(context.Background(), "s", dir); err != nil {
					t.Errorf("reset: %v", err)
				}
			}()
			waitFor(t, func() bool { return queued(r, "s") == 2 })
			queue()
			release()
		}, whyReset},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRegistry(t, Config{Grace: 200 * time.Millisecond})
			dir := t.TempDir()
			if tc.setup {
				if res, _ := eval(t, r, Request{Session: "s", Cwd: dir, Cells: []Cell{py("x = 1")}}); res.Status != StatusOK {
					t.Fatal(res.Status)
				}
			}
			in, rel := testkit.Mkfifo(t, dir, "in"), testkit.Mkfifo(t, dir, "release")
			marker := filepath.Join(dir, "died")
			// Holds until released, the first time only; then dies in the
			// death case (its retry runs through).
			hold := "x = 1\nimport os, signal\nif not os.path.exists(" + quote(marker) + "):\n" +
				"    open(" + quote(in) + ", 'w').close()\n    open(" + quote(rel) + ").read()\n" +
				"    open(" + quote(marker) + ", 'w').close()\n" +
				"    if " + map[bool]string{true: "True", false: "False"}[tc.dies] + ":\n        os.kill(os.getpid(), signal.SIGKILL)"
			first := make(chan Result, 1)
			go func() {
				res, _ := evalIn(t, r, Request{Session: "s", Cwd: dir, Cells: []Cell{{Language: LangPython, Code: hold, Timeout: time.Minute}}})
				first <- res
			}()
			if _, err := os.ReadFile(in); err != nil { // the running cell holds
				t.Fatal(err)
			}
			var job *Job
			queue := func() {
				var err error
				if job, err = r.Queue(Request{Session: "s", Cwd: dir, Cells: []Cell{py("print(x)")}}); err != nil {
					t.Fatal(err)
				}
			}
			release := func() {
				if err := os.WriteFile(rel, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			tc.end(t, r, dir, release, queue)
			<-first
			c := &collector{}
			res, err := job.Run(context.Background(), c.Cell)
			if err != nil {
				t.Fatal(err)
			}
			if !res.Cells[0].StateLost || !strings.Contains(c.Output(), "state lost: session s's py interpreter "+tc.why) {
				t.Fatalf("queued request: %+v, output %q; want %q told", res.Cells[0], c.Output(), tc.why)
			}
		})
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

// The memory of closed sessions keeps the newest maxLosses keys: a key
// taken and added again counts from its new place, not its first.
func TestLossMemoryKeepsTheNewest(t *testing.T) {
	key := func(i int) Key { return Key{Session: fmt.Sprint("s", i)} }
	var m lossMemory
	m.add(Loss{Key: key(0), Languages: []string{"py"}, Why: "first"})
	if _, ok := m.take(key(0)); !ok {
		t.Fatal("take after add found nothing")
	}
	for i := 1; i <= 200; i++ {
		m.add(Loss{Key: key(i), Languages: []string{"py"}, Why: "w"})
	}
	m.add(Loss{Key: key(0), Languages: []string{"py"}, Why: "again"})
	m.add(Loss{Key: key(0), Languages: []string{"sh"}, Why: "newer"})
	for i := 201; i <= 260; i++ {
		m.add(Loss{Key: key(i), Languages: []string{"py"}, Why: "w"})
	}
	l, ok := m.take(key(0))
	if !ok || l.Why != "newer" || fmt.Sprint(l.Languages) != "[py sh]" {
		t.Fatalf("take = %+v, %v; want the newer reason for both languages", l, ok)
	}
	if len(m.order) != len(m.byKey) || len(m.order) > maxLosses {
		t.Fatalf("order %d, byKey %d, bound %d", len(m.order), len(m.byKey), maxLosses)
	}
	if _, ok := m.take(key(1)); ok {
		t.Fatal("the oldest key was kept past the bound")
	}
}
