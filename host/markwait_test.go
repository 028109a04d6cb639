package host

import (
	"context"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/testkit"
)

// The wait for a cell's late end mark counts only the time the interpreter
// could run: stopped by job control (SignalGroup's SIGSTOP, sessions'
// Suspend) for longer than the wait, and continued, its cell ends as it
// would have, without the warning that the mark did not come. A one-shot
// run stopped itself with its interpreter as a cell's done was in and its
// end mark not yet read, and warned at fg (TestRunJobControlAsPython's
// atexit row, one CI run in four): here the fake runner holds the mark
// back until the SIGCONT instead, which the host sees the same way. The
// wait still ends a cell whose mark does not come, running or continued.
func TestMarkWaitHeldWhileStopped(t *testing.T) {
	checkClean(t, time.Minute)
	const wait = 50 * time.Millisecond
	for _, tc := range []struct {
		name string
		mode string // the fake runner's: its mark at the SIGCONT, or never
		stop bool   // SIGSTOP, then SIGCONT past the wait; else SIGCONT alone
		warn bool
	}{
		{"stopped past the wait, the mark at the SIGCONT", "latemark", true, false},
		{"running past the wait", "latemark", false, true},
		{"stopped past the wait, no mark", "nomark", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startPy(t, func(o *Options) {
				*o = fakeOptions(t, tc.mode)
				o.markWait = wait
			})
			text := make(chan struct{})
			var got []frames.Frame
			type result struct {
				done frames.Frame
				err  error
			}
			res := make(chan result, 1)
			go func() {
				done, err := p.Execute(context.Background(), frames.Request{Code: "pass"}, func(f frames.Frame) {
					got = append(got, f)
					if f.Type == frames.TypeStdout {
						close(text) // the fake runner's only text: its done is in the pipe
					}
				})
				res <- result{done, err}
			}()
			<-text
			if tc.stop {
				if err := p.SignalGroup(syscall.SIGSTOP); err != nil {
					t.Fatalf("SIGSTOP: %v", err)
				}
			}
			time.Sleep(6 * wait) // past the wait: the stimulus
			if err := p.SignalGroup(syscall.SIGCONT); err != nil {
				t.Fatalf("SIGCONT: %v", err)
			}
			r := <-res
			if r.err != nil || r.done.Status != frames.StatusOK {
				t.Fatalf("done %+v, err %v; want ok", r.done, r.err)
			}
			warned := false
			for _, f := range got {
				warned = warned || f.Type == frames.TypeWarning && strings.Contains(f.Message, "end-of-cell mark did not arrive")
			}
			if warned != tc.warn {
				t.Errorf("warned that the end mark did not come: %v, want %v; frames:\n%s", warned, tc.warn, dumpFrames(got))
			}
			if s := testkit.Text(got, frames.TypeStdout); s != "out\n" {
				t.Errorf("stdout %q, want %q", s, "out\n")
			}
		})
	}
}

// fakeLateMark is a runner whose cell's end mark on stdout comes after its
// done, once a SIGCONT came (as a host stopped with its interpreter reads
// it only after fg), or never (mark false: a cell that broke fd 1). Its
// one cell writes "out\n" to stdout, after its done.
func fakeLateMark(mark bool) int {
	f, ok := fakeFirstCell(true)
	if !ok {
		return 0
	}
	frameOut, in, req, id := f.frames, f.in, f.req, f.id
	fmt.Fprintf(frameOut, `{"type":"started","id":%s}`+"\n"+`{"type":"done","id":%s,"status":"ok","executionCount":1,"cancelled":false,"unmarked":2}`+"\n", id, id)
	os.Stdout.WriteString("out\n")
	<-f.cont
	if mark {
		os.Stdout.WriteString(f.mark(req.ID))
	}
	for in.Scan() { // until the exit request, or stdin's end
	}
	return 0
}
