package host

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
)

// A cancel whose cause holds backend.ErrInterruptAlone interrupts the
// interpreter alone, as kill -INT of python3's pid: the cell's child (in
// the interpreter's process group) gets no SIGINT; any other cancel
// interrupts the group, the child with it, as a terminal's Ctrl-C. The
// child blocks SIGINT and, once the cell took its KeyboardInterrupt, says
// whether one is pending.
func TestInterruptAloneSparesTheChildren(t *testing.T) {
	checkClean(t, 2*time.Minute)
	const code = "import os, signal, subprocess, sys\n" +
		"child = subprocess.Popen([sys.executable, '-c', \"import signal, sys\\nsignal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})\\n" +
		"print('ready', flush=True)\\nsys.stdin.read()\\nprint('pending' if signal.SIGINT in signal.sigpending() else 'none', flush=True)\"]," +
		" stdin=subprocess.PIPE, stdout=subprocess.PIPE)\n" +
		"child.stdout.readline()\nr, w = os.pipe()\n" +
		"try:\n    print('ready', flush=True)\n    os.read(r, 1)\nexcept KeyboardInterrupt:\n    pass\n" +
		"child.stdin.close()\nprint('child:', child.stdout.read().decode().strip())\nchild.wait()"
	for _, tc := range []struct {
		name  string
		cause error
		want  string // the child's
	}{
		{"a cancel", nil, "pending"},
		{"waited for", backend.ErrInterruptWait, "pending"},
		{"alone", backend.ErrInterruptAlone, "none"},
		{"waited for, alone", errors.Join(backend.ErrInterruptWait, backend.ErrInterruptAlone), "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startPy(t, func(o *Options) { o.Grace = 5 * time.Second })
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			var out strings.Builder
			done, err := p.Execute(ctx, frames.Request{Code: code}, func(f frames.Frame) {
				if f.Type == frames.TypeStdout {
					out.WriteString(f.Data)
					if f.Data == "ready\n" {
						cancel(tc.cause)
					}
				}
			})
			if err != nil || !done.Interrupted {
				t.Fatalf("err %v, done %+v, stdout %q; want the cell to take the interrupt", err, done, out.String())
			}
			if want := "ready\nchild: " + tc.want + "\n"; out.String() != want {
				t.Errorf("stdout %q, want %q", out.String(), want)
			}
		})
	}
}
