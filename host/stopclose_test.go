package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
)

// Ending an interpreter that is stopped by job control continues it, as a
// shell's kill %1 sends a stopped job SIGTERM and then SIGCONT: stopped,
// it could neither read Close's exit request nor run the SIGTERM handler
// a script set (its checkpoint), and waited out termGrace for the SIGKILL.

// termHandler is a cell that makes SIGTERM write "term" to the file mark
// and exit with 3, then prints "go"; then runs body.
func termHandler(mark, body string) string {
	return fmt.Sprintf("import os, signal, time\n"+
		"def term(n, f):\n    with open(%q, 'w') as f:\n        f.write('term')\n    os._exit(3)\n"+
		"signal.signal(signal.SIGTERM, term)\n"+
		"print('go', flush=True)\n%s\n", mark, body)
}

// marked says whether the SIGTERM handler wrote mark.
func marked(t *testing.T, mark string) bool {
	t.Helper()
	b, err := os.ReadFile(mark)
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b) == "term"
}

// A stopped interpreter closed is continued: an idle one reads the exit
// request and leaves (status 0, its SIGTERM handler not needed), a cell's
// gets the grace window and the SIGTERM, whose handler runs (status 3).
// Close returns within about the grace, not after termGrace more and a
// SIGKILL. One stopped behind the host's back (a cell's own SIGSTOP) is
// continued by the SIGTERM's SIGCONT.
func TestCloseContinuesStopped(t *testing.T) {
	checkClean(t, time.Minute)
	const grace, term = 300 * time.Millisecond, 5 * time.Second
	for _, tc := range []struct {
		name    string
		body    string // after the handler is set; "" ends the cell
		stop    bool   // SignalGroup(SIGSTOP) before Close
		handler bool   // the SIGTERM handler ran: exit 3, else 0
	}{
		{"stopped idle", "", true, false},
		{"stopped in a cell", "while True:\n    time.sleep(30)", true, true},
		{"stopped itself in a cell", "os.kill(os.getpid(), signal.SIGSTOP)\nwhile True:\n    time.sleep(30)", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startPy(t, func(o *Options) { o.Grace, o.termGrace = grace, term })
			mark := filepath.Join(t.TempDir(), "mark")
			onGo, started := onText("go")
			end := executeAsync(p, context.Background(), termHandler(mark, tc.body), onGo)
			await(t, started, end, "go")
			if tc.body == "" {
				if r := <-end; r.err != nil || r.done.Status != frames.StatusOK {
					t.Fatalf("done %+v, err %v; frames:\n%s", r.done, r.err, dumpFrames(r.frames))
				}
			}
			if tc.stop {
				if err := p.SignalGroup(syscall.SIGSTOP); err != nil {
					t.Fatalf("SIGSTOP: %v", err)
				}
			}
			t0 := time.Now()
			if err := p.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
			took := time.Since(t0)
			if tc.body != "" {
				<-end
			}
			want := 0
			if tc.handler {
				want = 3
			}
			if p.status.Signaled() || p.status.ExitStatus() != want {
				t.Errorf("status %v, want exit %d (killed: the stopped interpreter was not continued)", p.status, want)
			}
			if got := marked(t, mark); got != tc.handler {
				t.Errorf("SIGTERM handler ran %v, want %v", got, tc.handler)
			}
			if took > grace+term/2 {
				t.Errorf("Close took %v: the grace (%v) and termGrace (%v) waited out", took, grace, term)
			}
		})
	}
}

// The interrupt ladder's SIGTERM continues an interpreter stopped behind
// the host's back (a cell that stops itself as it takes the interrupt):
// its SIGTERM handler runs at once, not a SIGKILL termGrace later.
func TestLadderTermContinuesStopped(t *testing.T) {
	checkClean(t, time.Minute)
	const grace, term = 300 * time.Millisecond, 5 * time.Second
	p := startPy(t, func(o *Options) { o.Grace, o.termGrace = grace, term })
	mark := filepath.Join(t.TempDir(), "mark")
	// "in" is printed inside the try: an interrupt that came as soon as
	// termHandler's "go" did could land before it (a KeyboardInterrupt
	// ending the cell, not the ladder's SIGTERM).
	body := "try:\n    print('in', flush=True)\n    time.sleep(30)\nexcept KeyboardInterrupt:\n    os.kill(os.getpid(), signal.SIGSTOP)\n    time.sleep(30)"
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	onIn, started := onText("in")
	end := executeAsync(p, ctx, termHandler(mark, body), onIn)
	await(t, started, end, "in")
	t0 := time.Now()
	cancel()
	r := <-end
	took := time.Since(t0)
	if !errors.Is(r.err, backend.ErrKilled) {
		t.Fatalf("done %+v, err %v; want ErrKilled", r.done, r.err)
	}
	<-p.Done()
	if p.status.Signaled() || p.status.ExitStatus() != 3 {
		t.Errorf("status %v, want exit 3 (its SIGTERM handler's)", p.status)
	}
	if !marked(t, mark) {
		t.Error("the SIGTERM handler did not run")
	}
	if took > grace+term/2 {
		t.Errorf("the cell took %v to end: termGrace (%v) waited out", took, term)
	}
}
