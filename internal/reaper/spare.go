package reaper

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/evalhost/evalhost/internal/reaper/launch"
	"github.com/evalhost/evalhost/internal/reaper/reap"
	"github.com/evalhost/evalhost/internal/timeline"
)

// A spare is a reaper started before its child is known (Prestart): it
// waits on a Unix socket for the child's Spec and descriptors, so the
// reaper's own start (a second Go runtime and its package inits) overlaps
// with what its starter does meanwhile instead of preceding the child.
type spare struct {
	proc     *process
	lifeline *os.File // write end
	statusR  *os.File
	sock     *os.File // this end of the socket the Spec goes through
	started  time.Time
}

// Prestart starts a reaper now, before its child is known, so that the
// next Start in this process only has it fork the child: the reaper's own
// start then overlaps with what this process does until that Start. It
// returns at once; the reaper starts in the background. For a program
// that is about to start one process (evalhost run); a program that may
// not should not call it. At most one spare exists: a call while one is
// waiting does nothing, also when package launch's Begin started that one
// (from a package init, earlier than this package's could). An unused
// spare ends with DropSpare, or when this process exits.
func Prestart() { launch.Begin() }

// DropSpare ends a spare reaper that no Start used, and waits for it.
// Safe to call at any time and more than once.
func DropSpare() {
	if sp := takeSpare(); sp != nil {
		sp.drop()
	}
}

// takeSpare returns the spare once it is running, or nil: there is none,
// or it failed to start.
func takeSpare() *spare {
	sp, err := launch.Take()
	if sp == nil || err != nil {
		return nil
	}
	return &spare{proc: &process{Pid: sp.Pid}, lifeline: sp.Lifeline, statusR: sp.StatusR, sock: sp.Sock, started: sp.Started}
}

// start hands the spare its child. errSpareGone: the spare could not be
// given it (it died meanwhile, or exited as the Spec came without starting
// the child), and is gone; the caller starts a reaper of its own.
func (sp *spare) start(ctx context.Context, s Spec) (*Child, error) {
	env := envOr(s.Env)
	msg := reap.Spec{Path: s.Path, Argv: s.Args, Env: env, Dir: s.Dir, TTY: s.Terminal, TTYFd: s.TerminalFd, Idle: s.Idle}.Encode()
	fds := make([]int, len(s.Files))
	for i, f := range s.Files {
		fds[i] = int(f.Fd()) // blocking, as the child expects: it shares the file
	}
	err := sendAll(int(sp.sock.Fd()), msg, syscall.UnixRights(fds...))
	sp.sock.Close()
	if specSent != nil {
		specSent()
	}
	if err != nil {
		sp.drop()
		return nil, fmt.Errorf("%w: %v", errSpareGone, err)
	}
	c := &Child{proc: sp.proc, lifeline: sp.lifeline, statusR: sp.statusR, status: bufio.NewReader(sp.statusR)}
	if err := c.started(ctx); err != nil {
		if errors.Is(err, errNotStarted) {
			return nil, fmt.Errorf("%w: %v", errSpareGone, err)
		}
		return nil, err
	}
	timeline.MarkAt(sp.started, "reaper-spare", "pid", sp.proc.Pid) // often before the timeline was enabled
	timeline.Mark("child-started", "pid", c.Pid, "reaper", sp.proc.Pid, "spare", true)
	return c, nil
}

var errSpareGone = errors.New("reaper: the spare reaper is gone")

// specSent, when set (by a test), is called once a Spec went to a spare.
var specSent func()

// drop ends the spare and waits for it.
func (sp *spare) drop() {
	_ = sp.sock.Close()
	_ = sp.lifeline.Close()
	_, _ = sp.proc.Wait()
	_ = sp.statusR.Close()
}

// sendAll writes msg with the rights in oob on the first write.
func sendAll(fd int, msg, oob []byte) error {
	for len(msg) > 0 {
		n, err := syscall.SendmsgN(fd, msg, oob, nil, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		msg, oob = msg[n:], nil
	}
	return nil
}
