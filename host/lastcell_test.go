package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
)

// A cell sent as the last one (ExitAfterNextCell) runs and reports as any
// other, and then the runner leaves by itself, without Close: its exit
// request was already behind the cell in the pipe.
func TestExitAfterNextCell(t *testing.T) {
	checkClean(t, time.Minute)
	cases := []struct {
		name string
		code string
		// interrupt cancels the cell once it has started.
		interrupt bool
		check     func(t *testing.T, r *run, dir string)
	}{
		{name: "the cell runs, then the runner leaves", code: "x = 6 * 7\nprint(x)",
			check: func(t *testing.T, r *run, _ string) {
				if r.err != nil || r.done.Status != frames.StatusOK || r.stdout() != "42\n" {
					t.Errorf("done %+v, err %v, stdout %q; want ok and 42", r.done, r.err, r.stdout())
				}
			}},
		{name: "a cell reading stdin still gets EOF, not the exit request", code: "import os\nprint(repr(os.read(0, 100)))",
			check: func(t *testing.T, r *run, _ string) {
				if r.err != nil || strings.TrimSpace(r.stdout()) != "b''" {
					t.Errorf("stdout %q, err %v; want b'' (fd 0 is /dev/null)", r.stdout(), r.err)
				}
			}},
		{name: "atexit handlers run", code: "import atexit\natexit.register(lambda: open('atexit.txt', 'w').write('ran'))",
			check: func(t *testing.T, r *run, dir string) {
				if b, err := os.ReadFile(filepath.Join(dir, "atexit.txt")); err != nil || string(b) != "ran" {
					t.Errorf("atexit.txt: %q, %v; want ran", b, err)
				}
			}},
		{name: "an interrupted last cell reports cancelled", code: "import time\ntime.sleep(60)", interrupt: true,
			check: func(t *testing.T, r *run, _ string) {
				if r.err != nil || !r.done.Cancelled {
					t.Errorf("done %+v, err %v; want a cancelled done", r.done, r.err)
				}
			}},
		{name: "a last cell that ends its interpreter is a death, not a close", code: "import os\nos._exit(3)",
			check: func(t *testing.T, r *run, _ string) {
				var de *backend.DeathError
				if !errors.As(r.err, &de) || de.ExitCode != 3 {
					t.Errorf("err %v; want a DeathError with exit code 3", r.err)
				}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			p := startPy(t, func(o *Options) { o.Dir = dir })
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			p.ExitAfterNextCell()
			r := &run{}
			r.done, r.err = p.Execute(ctx, frames.Request{Code: tc.code}, func(f frames.Frame) {
				r.frames = append(r.frames, f)
				if tc.interrupt && f.Type == frames.TypeStarted {
					cancel()
				}
			})
			<-p.Done() // the watchdog fails a runner that never leaves
			tc.check(t, r, dir)
			if _, err := p.Execute(context.Background(), frames.Request{Code: "1"}, func(frames.Frame) {}); !errors.Is(err, backend.ErrClosed) {
				t.Errorf("execute after the last cell: %v, want ErrClosed", err)
			}
		})
	}
}

// Without ExitAfterNextCell the runner waits for the next request: a cell
// is not an interpreter's last unless the caller says so.
func TestRunnerStaysWithoutExitAfter(t *testing.T) {
	checkClean(t, time.Minute)
	p := startPy(t, nil)
	for _, code := range []string{"x = 1", "print(x + 1)"} {
		if r := execute(t, p, context.Background(), code); r.err != nil {
			t.Fatalf("%q: %v", code, r.err)
		}
	}
	if !p.Alive() {
		t.Fatal("the runner left without being asked")
	}
}
