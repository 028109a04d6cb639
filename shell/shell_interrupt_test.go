package shell

import (
	"context"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/testkit"
)

// strayInterrupt sends what a cancelled cell's interrupt sends, SIGINT to
// bash's process group, as if it came late: after its cell ended.
func strayInterrupt(t *testing.T, s *Shell) {
	t.Helper()
	s.stray.Store(true)
	if err := syscall.Kill(-s.Pid(), syscall.SIGINT); err != nil {
		t.Fatalf("SIGINT to bash: %v", err)
	}
}

// execAndThen runs code and calls then(i) from its own goroutine once the
// cell's started frame is out, waiting for it before returning.
func execAndThen(ctx context.Context, s *Shell, code string, then func()) *shellRun {
	var wg sync.WaitGroup
	r := &shellRun{}
	t0 := time.Now()
	r.done, r.err = s.Execute(ctx, frames.Request{ID: "c", Code: code}, func(f frames.Frame) {
		r.frames = append(r.frames, f)
		if f.Type == frames.TypeStarted {
			wg.Go(then)
		}
	})
	r.took = time.Since(t0)
	wg.Wait()
	return r
}

// Interrupt as soon as a cell has started, while bash may still be reading
// its line or forking its first program: the cell stops, the line is not
// lost (a SIGINT while bash reads a line can take all of it, and no marker
// would come), and the next cell is clean.
func TestShellInterruptAtStart(t *testing.T) {
	testkit.Clean(t, 2*time.Minute)
	s := startShell(t, Options{})
	for i := range 60 {
		delay := time.Duration(i%30) * 30 * time.Microsecond
		// Long enough that only a lost interrupt or a lost line reaches it.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		r := execAndThen(ctx, s, "echo hi; sleep 30", func() {
			time.Sleep(delay)
			if err := s.Interrupt(); err != nil {
				t.Errorf("interrupt: %v", err)
			}
		})
		cancel()
		if r.err != nil || r.done.Cancelled || r.done.Status != frames.StatusError {
			t.Fatalf("cell %d, interrupted %s after its start: done %+v, err %v, stdout %q; want it interrupted (status error, not cancelled by its timeout)",
				i, delay, r.done, r.err, r.stdout())
		}
		if r := shellCode(s, "echo ok"); r.err != nil || r.stdout() != "ok\n" {
			t.Fatalf("cell after %d: stdout %q, err %v; want exactly ok", i, r.stdout(), r.err)
		}
	}
}

// A SIGINT from outside (a job of an earlier cell that signals its process
// group, say) that reaches bash while it reads a cell's line can take the
// whole line: bash comes back to its prompt without running it. The line
// is typed again, and its guard keeps a copy from running the cell twice;
// a cell interrupted meanwhile is skipped instead, or interrupted again.
func TestShellLineTakenBySIGINT(t *testing.T) {
	testkit.Clean(t, 3*time.Minute)
	for _, tt := range []struct {
		name        string
		interrupted bool
	}{{"not interrupted", false}, {"interrupted too", true}} {
		t.Run(tt.name, func(t *testing.T) {
			s := startShell(t, Options{})
			runs := t.TempDir() + "/runs"
			ran := 0
			for i := range 80 {
				delay := time.Duration(i%20) * 15 * time.Microsecond
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				r := execAndThen(ctx, s, "echo ran >>"+shellQuote(runs)+"; echo ok", func() {
					time.Sleep(delay)
					if tt.interrupted {
						_ = s.Interrupt()
					}
					strayInterrupt(t, s)
				})
				cancel()
				if r.err != nil || r.done.Cancelled {
					t.Fatalf("cell %d, SIGINT %s after its start: done %+v, err %v, stdout %q; want it ended, not cut off by its timeout",
						i, delay, r.done, r.err, r.stdout())
				}
				// The SIGINT may also land once the cell runs, and end it
				// (130). What is left of a line cut in two is bash's to
				// complain of (a syntax error): that stays, as at a terminal.
				if out := withoutBashComplaints(r.stdout()); r.done.Status == frames.StatusOK && out != "ok" {
					t.Fatalf("cell %d: stdout %q, want ok", i, r.stdout())
				}
				if r.done.Status == frames.StatusOK {
					ran++
				}
			}
			if r := shellCode(s, "echo ok"); r.err != nil || r.stdout() != "ok\n" {
				t.Fatalf("last cell: stdout %q, err %v; want exactly ok", r.stdout(), r.err)
			}
			// Once each at most (a copy typed again runs nothing), and at
			// least each cell that ended ok.
			data, err := os.ReadFile(runs)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if n := strings.Count(string(data), "ran\n"); n < ran || n > 80 {
				t.Errorf("the cells ran %d times; %d ended ok of 80", n, ran)
			}
		})
	}
}

// withoutBashComplaints is out without its empty lines and those bash
// prints of a line it cannot run.
func withoutBashComplaints(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if l != "" && !strings.HasPrefix(l, "bash: ") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// What a prompt marker makes a cell type, on a terminal of its own: the
// interleavings TestShellLineTakenBySIGINT meets by chance, each made.
func TestShellPromptMarker(t *testing.T) {
	const nonce = "n0"
	mark := func(p string) []byte { return []byte("\x1eEVH" + nonce + ":" + p + "\x1e\n") }
	tests := []struct {
		name     string
		setup    func(c *shellCell)
		feed     []string
		typed    string // what the cell typed, "" for nothing
		status   int
		finished bool
	}{
		{"typed again", nil, []string{"P"}, "LINE\n", 0, false},
		{"interrupted: skipped", func(c *shellCell) { c.signalled = map[string]bool{} }, []string{"P"}, shellSkipLine(7), 0, false},
		{"skip marker ends it", nil, []string{"X:7"}, "", 130, true},
		{"another cell's skip marker", nil, []string{"X:6"}, "", 0, false},
		{"started: nothing", nil, []string{"S:7", "P"}, "", 0, false},
		{"bounded", func(c *shellCell) { c.retypes = shellMaxRetypes }, []string{"P"}, "", 0, false},
		{"end marker", nil, []string{"P", "7:0"}, "LINE\n", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			master, slave, err := pty.Open()
			if err != nil {
				t.Fatal(err)
			}
			defer master.Close()
			defer slave.Close()
			s := &Shell{master: master, nonce: nonce, scan: newShellScanner(nonce)}
			c := &shellCell{s: s, id: "c", n: 7, line: "LINE\n", emit: func(frames.Frame) {}, syncing: true}
			if tt.setup != nil {
				tt.setup(c)
			}
			var status int
			var found bool
			for _, m := range tt.feed {
				status, found = c.feed(mark(m))
			}
			if found != tt.finished || status != tt.status {
				t.Errorf("feed: status %d, finished %v; want %d, %v", status, found, tt.status, tt.finished)
			}
			if tt.name == "interrupted: skipped" && c.signalled != nil {
				t.Error("the interrupt was not forgotten: the next look would not send one again")
			}
			// Whatever the cell typed comes before this.
			if _, err := master.WriteString("END\n"); err != nil {
				t.Fatal(err)
			}
			var got []byte
			buf := make([]byte, 4096)
			for !strings.HasSuffix(string(got), "END\n") {
				n, err := slave.Read(buf)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, buf[:n]...)
			}
			if typed := strings.TrimSuffix(string(got), "END\n"); typed != tt.typed {
				t.Errorf("typed %q, want %q", typed, tt.typed)
			}
		})
	}
}
