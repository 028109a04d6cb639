package reaper

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/evalhost/evalhost/internal/reaper/launch"
	"github.com/evalhost/evalhost/internal/reaper/reap"
	"github.com/evalhost/evalhost/internal/timeline"
)

// Spec describes the process to start under a reaper.
type Spec struct {
	Path string   // executable path (not looked up on PATH)
	Args []string // argv, Args[0] included
	Env  []string // the child's whole environment; nil means this process's
	Dir  string   // working directory; empty means this process's
	// Files are the child's descriptors 0, 1, 2, ...; at least three.
	Files []*os.File
	// Terminal makes Files[TerminalFd], a terminal, the child's
	// controlling terminal.
	Terminal   bool
	TerminalFd int
	// Idle says the child starts nothing of its own before its first
	// request, and that the caller sends it only once Start has returned
	// (an interpreter's runner). On Linux the reaper then forks it before
	// it has subscribed to the terminating signals, and subscribes while
	// the child starts, ~0.5 ms sooner; a child that may fork at once (sh,
	// a tool's command) must not say so: a signal in that window could
	// leave what it forked behind (package reap's notifyTerminating).
	Idle bool
}

// killAfter is how long a reaper that failed to start its child gets to
// answer the lifeline before it is killed outright.
const killAfter = 2 * time.Second

// ErrReaperDied: the reaper ended without reporting the child's status,
// which happens only when something killed the reaper itself.
var ErrReaperDied = errors.New("reaper died without reporting its child's status")

// Child is a process running under a reaper.
type Child struct {
	Pid int // the child's pid, also its process group and session id

	proc     *process // the reaper
	lifeline *os.File // write end; closing it ends everything
	status   *bufio.Reader
	statusR  *os.File
	killOnce sync.Once
}

// Start starts the reaper and the child under it, and returns once the
// child is running. ctx bounds only the start.
func Start(ctx context.Context, s Spec) (*Child, error) {
	if len(s.Files) < 3 {
		return nil, fmt.Errorf("reaper: Spec.Files has %d descriptors; the child needs at least 0, 1 and 2", len(s.Files))
	}
	if err := checkSize(s, envOr(s.Env)); err != nil {
		return nil, err
	}
	collectExited()
	if sp := takeSpare(); sp != nil {
		c, err := sp.start(ctx, s)
		if !errors.Is(err, errSpareGone) {
			return c, err
		}
	}
	exe, err := launch.Exe()
	if err != nil {
		return nil, fmt.Errorf("reaper: find this program to re-execute: %w", err)
	}
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("reaper: lifeline pipe: %w", err)
	}
	statR, statW, err := os.Pipe()
	if err != nil {
		lifeR.Close()
		lifeW.Close()
		return nil, fmt.Errorf("reaper: status pipe: %w", err)
	}
	conf := strconv.Itoa(len(s.Files))
	if s.Terminal {
		conf += "," + reap.TTYConf(s.TerminalFd)
	}
	if s.Idle {
		conf += ",idle"
	}
	env := envOr(s.Env)
	env = env[:len(env):len(env)]
	if !hasVar(env, "GOMAXPROCS") {
		// One P from the runtime's start: the reaper only waits.
		env = append(env, "GOMAXPROCS=1")
		conf += ",gomaxprocs"
	}
	files := append(append([]*os.File(nil), s.Files...), lifeR, statW)
	pid, _, err := launch.Process(exe, append([]string{"evalhost-reaper", s.Path}, s.Args...),
		append(env, reap.EnvVar+"="+conf), s.Dir, files)
	lifeR.Close()
	statW.Close()
	if err != nil {
		lifeW.Close()
		statR.Close()
		if errors.Is(err, syscall.E2BIG) {
			return nil, sizeError(s, envOr(s.Env))
		}
		return nil, fmt.Errorf("reaper: run %s: %w", exe, err)
	}
	proc := &process{Pid: pid}
	c := &Child{proc: proc, lifeline: lifeW, statusR: statR, status: bufio.NewReader(statR)}
	if err := c.started(ctx); err != nil {
		return nil, err
	}
	timeline.Mark("child-started", "pid", c.Pid, "reaper", proc.Pid, "spare", false)
	return c, nil
}

// envOr is env, or this process's when nil (Spec.Env).
func envOr(env []string) []string {
	if env == nil {
		return os.Environ()
	}
	return env
}

// started reads the child's pid from the reaper. On failure the reaper is
// ended and waited for.
func (c *Child) started(ctx context.Context) error {
	var err error
	if c.Pid, err = c.readPid(ctx); err != nil {
		// The lifeline ends a reaper that is merely slow; one that does not
		// answer it (not this program after all) is killed.
		c.Kill()
		t := time.AfterFunc(killAfter, c.proc.Kill)
		ws, werr := c.Wait()
		t.Stop()
		if errors.Is(err, io.EOF) && errors.Is(werr, ErrReaperDied) {
			// It said nothing: say how it ended (an idle child was forked
			// before the report, so "before starting" would not be true).
			err = fmt.Errorf("reaper %d ended (%s) before it reported its child's start", c.proc.Pid, describe(ws))
			if notStarted(ws) {
				err = fmt.Errorf("%w: %w", errNotStarted, err)
			}
		}
		return err
	}
	return nil
}

// errNotStarted marks a reaper that ended before its report without
// starting the child: starting it again runs it once.
var errNotStarted = errors.New("the child was not started")

// notStarted says whether a reaper that ended with status ws before its
// report cannot have started its child's work. Only a spare that never got
// its Spec exits 0 then (dropped, its starter gone, or a terminating
// signal as the Spec came), and a reaper takes SIGTERM, SIGINT and SIGHUP
// before it starts its child (package reap's serve), so dying of one means
// it died before; or, an idle child's (Spec.Idle) on Linux, before it
// reported the pid: the child, forked, died with it (its parent-death
// signal) in its own start-up, before its first request. SIGKILL or a crash
// may come after the child's start: not this.
func notStarted(ws syscall.WaitStatus) bool {
	if ws.Exited() {
		return ws.ExitStatus() == 0
	}
	if !ws.Signaled() {
		return false
	}
	switch ws.Signal() {
	case syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP:
		return true
	}
	return false
}

// readPid reads the reaper's first line: "pid N", or "error MESSAGE" when
// the child could not be started.
func (c *Child) readPid(ctx context.Context) (int, error) {
	if d, ok := ctx.Deadline(); ok {
		_ = c.statusR.SetReadDeadline(d)
	}
	stop := context.AfterFunc(ctx, func() { _ = c.statusR.SetReadDeadline(time.Now()) })
	line, err := c.status.ReadString('\n')
	stop()
	_ = c.statusR.SetReadDeadline(time.Time{})
	if err != nil {
		if ctx.Err() != nil {
			return 0, fmt.Errorf("reaper: waiting for the child to start: %w", ctx.Err())
		}
		return 0, fmt.Errorf("reaper %d: reading its report: %w", c.proc.Pid, err) // at its end, started says how it ended
	}
	line = strings.TrimSuffix(line, "\n")
	if msg, ok := strings.CutPrefix(line, "error "); ok {
		return 0, fmt.Errorf("reaper: %s", msg)
	}
	pid, err := strconv.Atoi(strings.TrimPrefix(line, "pid "))
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("reaper: bad first line %q", line)
	}
	return pid, nil
}

// ReaperPid returns the reaper's own pid.
func (c *Child) ReaperPid() int { return c.proc.Pid }

// Kill closes the lifeline: the reaper kills the child and everything below
// it, and exits. It does not wait; Wait does. Safe to call more than once.
func (c *Child) Kill() {
	c.killOnce.Do(func() { _ = c.lifeline.Close() })
}

// Wait waits for the reaper's report of the child's exit, which it sends
// once the child and everything below it are gone, and returns the child's
// wait status. The reaper process itself exits right after its report and
// is not waited for (its exit takes a Go runtime's teardown, ~0.5 ms): it is
// collected at once when it is gone already, else at a later Start or Wait,
// or by init when this program exits. If the reaper was killed before it
// could report, Wait waits for it, the status is the reaper's own and the
// error wraps ErrReaperDied. Call it exactly once.
func (c *Child) Wait() (syscall.WaitStatus, error) {
	var ws syscall.WaitStatus
	reported := false
	for !reported {
		line, err := c.status.ReadString('\n')
		if v, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "exit "); ok && strings.HasSuffix(line, "\n") {
			if n, perr := strconv.ParseUint(v, 10, 32); perr == nil {
				ws, reported = syscall.WaitStatus(n), true
				timeline.Mark("child-exited", "pid", c.Pid, "status", ws)
			}
		}
		if err != nil {
			break
		}
	}
	c.Kill()
	_ = c.statusR.Close()
	if reported {
		c.proc.collect()
		return ws, nil
	}
	own, werr := c.proc.Wait()
	timeline.Mark("reaper-exited", "pid", c.proc.Pid)
	how := describe(own)
	if werr != nil {
		how = werr.Error()
	}
	return own, fmt.Errorf("%w (reaper %d: %s)", ErrReaperDied, c.proc.Pid, how)
}

// describe spells a wait status as os.ProcessState does: "signal: killed",
// "exit status 2".
func describe(ws syscall.WaitStatus) string {
	if ws.Signaled() {
		return "signal: " + ws.Signal().String()
	}
	return "exit status " + strconv.Itoa(ws.ExitStatus())
}

func hasVar(env []string, name string) bool {
	for _, kv := range env {
		if strings.HasPrefix(kv, name+"=") {
			return true
		}
	}
	return false
}
