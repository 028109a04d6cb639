package host

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/reaper"
	"github.com/evalhost/evalhost/internal/trustdir"
	"github.com/evalhost/evalhost/runner"
)

// Start spawns `<Python> <Args...> <Runner>` in its own process group and
// returns once the runner has sent ready. A failure is a *StartError carrying
// the child's stderr tail; a timeout wraps ErrStartTimeout; a missing
// interpreter wraps ErrNoInterpreter. Nothing is left running on failure.
func Start(ctx context.Context, o Options) (*Process, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, &StartError{Err: err}
	}
	boot := runner.BootFor(o.Runner, o.Python)
	p, err := start(ctx, o, boot)
	if err != nil && boot.FromBytecode() && bytecodeRefused(err, boot.Bytecode) {
		// Its magic number is another interpreter's, or it went before
		// python opened it: once, from runner.py, which writes it anew.
		// python refuses the file before it runs a line of it, but after
		// site ran: sitecustomize and .pth files run again.
		p, err = start(ctx, o, boot.Refused())
	}
	return p, err
}

// bytecodeRefused reports whether a start ended as python does when the
// .pyc it was given, bytecode, is not one it can run (every marshal error
// is a "Bad code object"), or was not there to open. A stderr that speaks
// of marshal data is not enough: that is a stdlib .pyc gone bad, which a
// start from runner.py meets as well.
func bytecodeRefused(err error, bytecode string) bool {
	var early *EarlyExitError
	if !errors.As(err, &early) || early.Death == nil {
		return false
	}
	tail := early.Death.StderrTail
	return strings.Contains(tail, "Bad magic number in .pyc file") || strings.Contains(tail, "Bad code object in .pyc file") ||
		strings.Contains(tail, "Can't reopen .pyc file") || strings.Contains(tail, "can't open file '"+bytecode+"'")
}

// start is one try of Start's, from boot.File.
func start(ctx context.Context, o Options, boot runner.Boot) (*Process, error) {
	nonce, err := newNonce()
	if err != nil {
		return nil, &StartError{Err: err}
	}
	var ends pipeSet
	if err := ends.open(o.MergeStderr); err != nil {
		return nil, &StartError{Err: err}
	}
	// The runner leads its own session (so its own process group) with no
	// controlling terminal but StdinTerminal's: code that opens /dev/tty
	// (ssh, sudo, getpass in C) fails at once instead of being stopped by
	// SIGTTIN as a background job of the user's terminal, as Jupyter starts
	// kernels. Its reaper ends
	// everything the runner starts when the runner or this process dies.
	files := ends.child[:]
	if o.Stdin != nil {
		// fd 4, which the runner moves to fd 0 once it has taken fd 0,
		// its requests, for itself (childEnv names it).
		files = append(files, o.Stdin)
	}
	startCtx, cancel := context.WithTimeout(ctx, o.StartTimeout)
	child, err := reaper.Start(startCtx, reaper.Spec{
		Path:  o.Python,
		Args:  append(append([]string{o.Python}, o.Args...), boot.File),
		Env:   append(childEnv(o, nonce), boot.Env...),
		Dir:   o.Dir,
		Files: files,
		// fd 4: the runner moves it to 0 before any cell runs.
		Terminal: o.StdinTerminal, TerminalFd: 4,
		// The runner starts nothing before its first request, sent once
		// ready has come, after Start.
		Idle: true,
	})
	cancel()
	ends.closeChild()
	if err != nil {
		ends.closeParent()
		return nil, &StartError{Err: fmt.Errorf("run %s: %w", trustdir.Shown(o.Python), trustdir.ShownError(err))}
	}
	p := &Process{
		opts: o, child: child, pid: child.Pid, nonce: nonce,
		reqW: ends.parent[0], req: rawFile(ends.parent[0]),
		outR: ends.parent[1], errR: ends.parent[2], frR: ends.parent[3],
		chunks:   [3]*chunks{1: newChunks(), 2: newChunks()},
		events:   make(chan event, 64),
		batches:  make(chan []frames.Frame, 2),
		out:      make(chan frames.Frame, 64),
		readyCh:  make(chan frames.Frame, 1),
		exited:   make(chan struct{}),
		pumpDone: make(chan struct{}),
	}
	p.startRawReaders() // before waitChild, which closes what they read
	p.wg.Add(3)
	go p.waitChild()
	go p.readFrames()
	go p.pump()
	if err := p.awaitReady(ctx); err != nil {
		return nil, err
	}
	return p, nil
}

// awaitReady is the start handshake: the ready frame within StartTimeout.
func (p *Process) awaitReady(ctx context.Context) error {
	t := time.NewTimer(p.opts.StartTimeout)
	defer t.Stop()
	var err error
	select {
	case p.ready = <-p.readyCh:
		return nil
	case <-p.pumpDone:
		<-p.exited
		err = &EarlyExitError{Python: p.opts.Python, Death: p.deathError()}
	case <-t.C:
		err = fmt.Errorf("%w: no ready frame from %s %s within %s", ErrStartTimeout, trustdir.Shown(p.opts.Python), trustdir.Shown(p.opts.Runner), p.opts.StartTimeout)
	case <-ctx.Done():
		err = fmt.Errorf("waiting for ready: %w", ctx.Err())
	}
	_ = p.Kill()
	return &StartError{Err: err, StderrTail: p.tail.String()}
}

func newNonce() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("sync nonce: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// pipeSet holds the four pipes of the transport: index = child fd. For fd 0
// the child holds the read end; for fds 1-3 it holds the write end. The parent
// ends are non-blocking (os.Pipe), so closing one unblocks its reader. Merged
// (Options.MergeStderr), fd 2 is fd 1's pipe: child[2] is child[1], and
// parent[2] is nil.
type pipeSet struct {
	child, parent [4]*os.File
}

func (s *pipeSet) open(merged bool) error {
	for fd := range 4 {
		if fd == 2 && merged {
			continue
		}
		r, w, err := os.Pipe()
		if err != nil {
			s.closeChild()
			s.closeParent()
			return fmt.Errorf("create pipe for fd %d: %w", fd, err)
		}
		if fd == 0 {
			s.child[fd], s.parent[fd] = r, w
		} else {
			growPipe(w)
			s.child[fd], s.parent[fd] = w, r
		}
	}
	if merged {
		s.child[2] = s.child[1]
	}
	return nil
}

func (s *pipeSet) closeChild() {
	for fd, f := range s.child {
		if f != nil && (fd != 2 || f != s.child[1]) {
			_ = f.Close()
		}
	}
}

func (s *pipeSet) closeParent() {
	for _, f := range s.parent {
		if f != nil {
			_ = f.Close()
		}
	}
}
