package bridge

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/evalhost/evalhost/internal/reaper"
)

// commandWrapper runs a tool's COMMAND ($1) under `sh -c`, as the direct
// child of a reaper (internal/reaper), so that nothing it starts outlives
// evalhost, SIGKILL included. The wrapper, not COMMAND, is the reaper's
// child: a reaper ends everything below it when its child exits, and what
// COMMAND leaves running must live on until the bridge has seen whether it
// holds COMMAND's stdout or stderr (the wait delay) and whether any is
// left to kill. So the wrapper gives up its own stdio once COMMAND has
// exited, writes COMMAND's status on fd 3, and waits on fd 4 until the
// bridge lets it go (or dies): then the reaper ends whatever is left.
const commandWrapper = `sh -c "$1" 3>&- 4<&-
s=$?
exec 0<&- 1>&- 2>&-
echo "$s" >&3
exec 3>&-
read _ <&4`

// toolProc is one tool command running under its reaper.
type toolProc struct {
	child  *reaper.Child
	hold   *os.File      // the wrapper's fd 4: closing it lets the wrapper end
	status chan int      // COMMAND's exit status; closed without one if the wrapper died first
	output chan struct{} // closed once stdout and stderr are at EOF (nobody holds them)
	stdout *boundedBuffer
	stderr *tailBuffer
	wg     sync.WaitGroup // the copies and the stdin writer
	once   sync.Once
}

// startTool starts COMMAND with the call's args on stdin.
func startTool(ctx context.Context, c Call, command string) (*toolProc, error) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		return nil, err
	}
	var parent, child []*os.File // ours, and the wrapper's fds 0..4
	closeAll := func(fs []*os.File) {
		for _, f := range fs {
			f.Close()
		}
	}
	for i := range 5 {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll(parent)
			closeAll(child)
			return nil, err
		}
		if i == 0 || i == 4 { // the wrapper reads stdin and fd 4
			r, w = w, r
		}
		parent, child = append(parent, r), append(child, w)
	}
	env := append(os.Environ(), "EVALHOST_TOOL="+c.Name, "EVALHOST_SESSION="+c.Session, "EVALHOST_RUN="+c.Run)
	ch, err := reaper.Start(ctx, reaper.Spec{Path: sh, Args: []string{"sh", "-c", commandWrapper, "evalhost-tool", command},
		Env: env, Files: child})
	closeAll(child)
	if err != nil {
		closeAll(parent)
		return nil, err
	}
	p := &toolProc{child: ch, hold: parent[4], status: make(chan int, 1), output: make(chan struct{}),
		stdout: &boundedBuffer{max: maxCommandStdout}, stderr: &tailBuffer{max: stderrTailBytes}}
	var copies sync.WaitGroup
	copies.Add(2)
	p.wg.Add(5)
	go func() { defer p.wg.Done(); defer parent[0].Close(); _, _ = parent[0].Write(c.Args) }()
	for _, o := range []struct {
		f *os.File
		w io.Writer
	}{{parent[1], p.stdout}, {parent[2], p.stderr}} {
		go func() { defer p.wg.Done(); defer copies.Done(); defer o.f.Close(); _, _ = io.Copy(o.w, o.f) }()
	}
	go func() { defer p.wg.Done(); copies.Wait(); close(p.output) }()
	go func() {
		defer p.wg.Done()
		defer parent[3].Close()
		defer close(p.status)
		line, _ := bufio.NewReader(parent[3]).ReadString('\n')
		if n, err := strconv.Atoi(strings.TrimSpace(line)); err == nil {
			p.status <- n
		}
	}()
	return p, nil
}

// leftovers says whether processes COMMAND started are still running
// (or, where that cannot be seen, still hold its stdout or stderr).
func (p *toolProc) leftovers(held bool) bool {
	if n, ok := descendants(p.child.ReaperPid()); ok {
		return n > 1 // the wrapper is one
	}
	return held
}

// end lets the wrapper go (kill: at once, with everything below it) and
// waits until the reaper, so every process COMMAND started, is gone and
// the output is read. Safe to call twice.
func (p *toolProc) end(kill bool) {
	p.once.Do(func() {
		if kill {
			p.child.Kill()
		}
		p.hold.Close()
		_, _ = p.child.Wait() // the wrapper's status: COMMAND's came on fd 3
		p.wg.Wait()
	})
}

// signalOf reads an exit status as sh reports a command killed by a
// signal (128+N); ok is false for a plain exit. A command that exits
// with 128+N itself reads the same: sh tells them apart for no one.
func signalOf(status int) (string, bool) {
	if status <= 128 || status > 128+64 {
		return "", false
	}
	return syscall.Signal(status - 128).String(), true
}

// commandFailed builds the error of a command that ended non-zero.
func commandFailed(name string, status int, leftovers bool, stderr string) *CommandError {
	ce := &CommandError{Name: name, ExitCode: status, StderrTail: stderr, LeftoversKilled: leftovers}
	if sig, ok := signalOf(status); ok {
		ce.ExitCode, ce.Signal = -1, sig
	}
	return ce
}

// waitDelayError: the command exited 0, but what it left in the
// background held its stdout or stderr past the wait delay.
func waitDelayError(name, stderr string) *CommandError {
	err := fmt.Errorf("it exited, but processes it started kept its stdout or stderr open for %s and were killed; "+
		"redirect the output of background processes (cmd >/dev/null 2>&1 &)", commandWaitDelay)
	return &CommandError{Name: name, ExitCode: 0, StderrTail: stderr, Err: err}
}
