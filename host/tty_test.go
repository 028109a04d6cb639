package host

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/evalhost/evalhost/frames"
)

// A cell that reads the terminal fails at once when evalhost runs in one
// (a person's shell): the runner has no controlling terminal. In the
// terminal's session it would be a background job, stopped by SIGTTIN
// until the cell's timeout killed it and its state.
func TestCellCannotReadTheTerminal(t *testing.T) {
	checkClean(t, time.Minute)
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "HOST_TTY_CELL=open('/dev/tty').read(1)",
		"HOST_TTY_PYTHON="+python(t), "HOST_TTY_RUNNER="+runnerPath(t))
	cmd.Stdin, cmd.Stderr = tty, tty
	var out strings.Builder
	cmd.Stdout = &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	drained := make(chan struct{})
	go func() { io.Copy(io.Discard, ptmx); close(drained) }() // EIO once the last holder exits
	defer func() { <-drained }()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("helper: %v; output %q", err, out.String())
	}
	if got := out.String(); !strings.HasPrefix(got, "error OSError") {
		t.Fatalf("cell outcome %q; want an OSError at once", got)
	}
}

// ttyHost runs in a helper process whose controlling terminal is a pty:
// it runs code in a runner and prints the outcome.
func ttyHost(code string) int {
	p, err := Start(context.Background(), Options{Python: os.Getenv("HOST_TTY_PYTHON"),
		Runner: os.Getenv("HOST_TTY_RUNNER"), Grace: 500 * time.Millisecond})
	if err != nil {
		fmt.Println("start:", err)
		return 1
	}
	defer p.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var ename string
	done, err := p.Execute(ctx, frames.Request{Code: code}, func(f frames.Frame) {
		if f.Type == frames.TypeError {
			ename = f.Ename
		}
	})
	switch {
	case err != nil:
		fmt.Println("failed:", err)
	case done.Cancelled:
		fmt.Println("cancelled")
	default:
		fmt.Println(done.Status, ename)
	}
	return 0
}

// With StdinTerminal, Stdin (a pseudo-terminal) is the interpreter's
// controlling terminal: /dev/tty opens, and it is the cell's stdin; given
// as Stdin alone, it is only the cell's stdin, and /dev/tty fails.
func TestStdinTerminal(t *testing.T) {
	checkClean(t, time.Minute)
	const code = "import os\ntry:\n    fd = os.open('/dev/tty', os.O_RDWR)\n    print(os.isatty(0), 'a /dev/tty', os.isatty(fd))\n" +
		"except OSError as e:\n    print(os.isatty(0), 'no /dev/tty:', e.errno)"
	for _, tc := range []struct {
		name     string
		terminal bool
		want     string
	}{
		{"the controlling terminal", true, "True a /dev/tty True\n"},
		{"stdin alone", false, "True no /dev/tty: 6\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ptmx, tty, err := pty.Open()
			if err != nil {
				t.Skipf("no pty: %v", err)
			}
			defer ptmx.Close()
			defer tty.Close()
			p := startPy(t, func(o *Options) { o.Stdin, o.StdinTerminal = tty, tc.terminal })
			var out strings.Builder
			if _, err := p.Execute(context.Background(), frames.Request{Code: code}, func(f frames.Frame) {
				if f.Type == frames.TypeStdout {
					out.WriteString(f.Data)
				}
			}); err != nil {
				t.Fatal(err)
			}
			if out.String() != tc.want {
				t.Errorf("cell printed %q, want %q", out.String(), tc.want)
			}
		})
	}
	if _, err := Start(context.Background(), Options{Python: python(t), Runner: runnerPath(t), StdinTerminal: true}); err == nil ||
		!strings.Contains(err.Error(), "StdinTerminal without") {
		t.Errorf("StdinTerminal without Stdin: %v; want it refused", err)
	}
}
