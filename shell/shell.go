package shell

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/creack/pty"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
	"github.com/evalhost/evalhost/internal/reaper"
)

// Options describe how to start one persistent bash.
type Options struct {
	Bash string // a path, or a name looked up on Env's PATH; default "bash"
	// Env is the complete environment, already filtered; nil means this
	// process's. TERM=dumb, PAGER=cat and GIT_PAGER=cat are added when
	// absent, since programs see a terminal and would otherwise start a pager
	// that waits for keys.
	Env          []string
	Dir          string        // working directory; empty means this process's
	StartTimeout time.Duration // until ready; default DefaultStartTimeout
	Grace        time.Duration // interrupt → kill, exit → kill; default DefaultGrace
	Cols, Rows   uint16        // terminal size; default 200×50
}

// Shell is one interactive bash under a pseudo-terminal; see the package
// comment.
//
// Each cell is written to a file and sourced, then bash prints an end marker
// carrying a per-shell random nonce, the cell number and the exit status, so
// output never leaks between cells. Output a background job writes after its
// cell ended is reported at the start of the next cell (as a terminal shows
// it at the next prompt), or dropped at Close.
//
// A Shell is used by one caller at a time; Execute while a cell runs returns
// ErrBusy. After Execute returns an error, or Alive turns false, call Close
// or Kill to release it.
type Shell struct {
	opts   Options
	child  *reaper.Child
	bash   string // its path
	master *os.File
	dir    string // temp dir holding the cell file (cellDir's path)
	cells  *cellDir
	nonce  string
	ready  frames.Frame

	out    chan shellChunk // reader → Execute; closed when the reader ends
	quit   chan struct{}   // closed by finish: the reader stops sending
	exited chan struct{}   // closed by the waiter once bash is reaped
	wg     sync.WaitGroup  // reader and waiter

	waitStatus syscall.WaitStatus // bash's; valid once exited is closed
	waitErr    error              // its reaper died without reporting it
	busy       atomic.Bool
	// strays counts the interrupts sent since a cell last synced that may
	// reach bash back at its prompt, where bash prints a newline (and ^C)
	// for each that would open the next cell's output. That cell's line then
	// prints a sync marker before its code, and up to that many such lines
	// before it are dropped (shellCell.hold).
	strays    atomic.Int32
	closed    atomic.Bool // Close or Kill called: Execute refuses
	killed    atomic.Bool // the host sent SIGKILL
	finishing sync.Once
	finishErr error

	// Owned by whoever holds busy (or Start before it returns).
	scan    *shellScanner
	outDone bool // out was closed
	count   int
	tail    shellTail
}

type shellChunk struct {
	data []byte
	err  error
}

// shellReadSize bounds one read from the pty, hence one stdout frame.
const shellReadSize = 32 << 10

// Start starts bash and returns once it has echoed the ready marker,
// within StartTimeout. A failure is a *backend.StartError carrying the output tail.
func Start(ctx context.Context, o Options) (*Shell, error) {
	o, bash, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &Shell{
		opts:   o,
		nonce:  shellNonce(),
		out:    make(chan shellChunk),
		quit:   make(chan struct{}),
		exited: make(chan struct{}),
	}
	s.scan = newShellScanner(s.nonce)
	SweepCellDirsOnce() // what killed evalhosts' shells left
	if s.cells, err = makeCellDir(); err != nil {
		return nil, fmt.Errorf("start bash: cell directory: %w", err)
	}
	s.dir = s.cells.path
	if err := s.spawn(ctx, bash); err != nil {
		_ = s.cells.remove()
		return nil, &backend.StartError{Err: err}
	}
	if err := s.handshake(ctx); err != nil {
		_ = s.Kill()
		return nil, &backend.StartError{Err: err, StderrTail: s.tail.String()}
	}
	return s, nil
}

func (o Options) withDefaults() (Options, string, error) {
	if o.StartTimeout <= 0 {
		o.StartTimeout = DefaultStartTimeout
	}
	if o.Grace <= 0 {
		o.Grace = DefaultGrace
	}
	if o.Cols == 0 {
		o.Cols = 200
	}
	if o.Rows == 0 {
		o.Rows = 50
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	o.Env = shellEnvDefaults(o.Env)
	if o.Bash == "" {
		o.Bash = "bash"
	}
	bash, err := shellLookPath(o.Bash, o.Env)
	if err != nil {
		return o, "", &backend.StartError{Err: fmt.Errorf("%w: %v; install bash or set Options.Bash to its path", backend.ErrNoInterpreter, err)}
	}
	if o.Dir != "" {
		// As package host says it: a directory removed since the request
		// named it is "no such file or directory", not "not a directory".
		if fi, err := os.Stat(o.Dir); err != nil {
			return o, "", &backend.StartError{Err: fmt.Errorf("working directory: %w", err)}
		} else if !fi.IsDir() {
			return o, "", &backend.StartError{Err: fmt.Errorf("working directory %q is not a directory", o.Dir)}
		}
	}
	return o, bash, nil
}

// shellLookPath resolves name on the PATH the shell will get, not ours.
func shellLookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return exec.LookPath(name)
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		if p, err := exec.LookPath(filepath.Join(dir, name)); err == nil {
			return p, nil
		}
	}
	return exec.LookPath(name)
}

func shellEnvDefaults(env []string) []string {
	out := append([]string(nil), env...)
	for _, kv := range []string{"TERM=dumb", "PAGER=cat", "GIT_PAGER=cat"} {
		name := kv[:strings.IndexByte(kv, '=')+1]
		found := false
		for _, e := range env {
			if strings.HasPrefix(e, name) {
				found = true
				break
			}
		}
		if !found {
			out = append(out, kv)
		}
	}
	return out
}

func shellNonce() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// spawn starts bash as the leader of a new session whose controlling
// terminal is the pty, and starts the reader and the waiter.
func (s *Shell) spawn(ctx context.Context, bash string) error {
	master, slave, err := pty.Open()
	if err != nil {
		return fmt.Errorf("open pty: %w", err)
	}
	defer slave.Close()
	if master, err = shellPollable(master); err != nil {
		return fmt.Errorf("open pty: %w", err)
	}
	if err := pty.Setsize(slave, &pty.Winsize{Cols: s.opts.Cols, Rows: s.opts.Rows}); err != nil {
		_ = master.Close()
		return fmt.Errorf("set pty size: %w", err)
	}
	if err := shellQuietTTY(slave); err != nil {
		_ = master.Close()
		return err
	}
	// Its reaper ends what the cells started when bash or this process dies.
	startCtx, cancel := context.WithTimeout(ctx, s.opts.StartTimeout)
	child, err := reaper.Start(startCtx, reaper.Spec{
		Path:     bash,
		Args:     []string{bash, "--noprofile", "--norc", "--noediting", "-i"},
		Env:      s.opts.Env,
		Dir:      s.opts.Dir,
		Files:    []*os.File{slave, slave, slave},
		Terminal: true, // bash leads a new session whose terminal is the pty
	})
	cancel()
	if err != nil {
		_ = master.Close()
		return fmt.Errorf("run %s: %w", bash, err)
	}
	s.child, s.bash, s.master = child, bash, master
	s.wg.Add(2)
	go s.read()
	go s.wait()
	return nil
}

// read forwards pty output to Execute until the pty fails: EIO once every
// process holding the slave is gone, or the master is closed by finish.
func (s *Shell) read() {
	defer s.wg.Done()
	defer close(s.out)
	buf := make([]byte, shellReadSize)
	for {
		n, err := s.master.Read(buf)
		if n > 0 {
			select {
			case s.out <- shellChunk{data: append([]byte(nil), buf[:n]...)}:
			case <-s.quit:
				return
			}
		}
		if err != nil {
			select {
			case s.out <- shellChunk{err: err}:
			case <-s.quit:
			}
			return
		}
	}
}

func (s *Shell) wait() {
	defer s.wg.Done()
	s.waitStatus, s.waitErr = s.child.Wait()
	close(s.exited)
}

// handshake types the init line and waits for the ready marker.
func (s *Shell) handshake(ctx context.Context) error {
	if _, err := s.master.WriteString(shellInitLine(s.nonce)); err != nil {
		return fmt.Errorf("write to bash: %w", err)
	}
	timer := time.NewTimer(s.opts.StartTimeout)
	defer timer.Stop()
	for {
		select {
		case c, ok := <-s.out:
			if !ok {
				s.outDone = true
				return errors.New("bash closed its terminal before it was ready")
			}
			if c.data == nil {
				continue
			}
			s.scan.Write(c.data)
			for {
				text, payload, isMark, ok := s.scan.Next()
				if !ok {
					break
				}
				if !isMark {
					s.tail.Write(text)
					continue
				}
				if v, found := strings.CutPrefix(payload, "R:"); found {
					s.ready = frames.Frame{Type: frames.TypeReady, Runner: "bash " + v,
						PID: s.child.Pid, Executable: s.bash}
					return nil
				}
			}
		case <-s.exited:
			s.drain(nil)
			return fmt.Errorf("bash exited before it was ready: %w", s.deathError())
		case <-timer.C:
			return fmt.Errorf("bash: %w (%s)", backend.ErrStartTimeout, s.opts.StartTimeout)
		case <-ctx.Done():
			return fmt.Errorf("bash: start: %w", ctx.Err())
		}
	}
}

// Ready returns the synthesised ready frame: Runner is "bash " + its
// BASH_VERSION, PID and Executable are bash's.
func (s *Shell) Ready() frames.Frame { return s.ready }

// Pid returns bash's process id (also its process group and session id).
func (s *Shell) Pid() int { return s.child.Pid }

// Done is closed once bash has exited and been reaped.
func (s *Shell) Done() <-chan struct{} { return s.exited }

// Alive reports whether bash is running and the Shell not closed.
func (s *Shell) Alive() bool {
	if s.closed.Load() {
		return false
	}
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
}

// Interrupt sends SIGINT to the terminal's foreground process group (bash's
// group, where the cell's programs run), as ^C at a terminal would.
func (s *Shell) Interrupt() error {
	if !s.Alive() {
		return fmt.Errorf("interrupt bash: %w", backend.ErrClosed)
	}
	pgrp, err := shellForeground(s.master)
	if err != nil || pgrp <= 0 {
		pgrp = s.Pid()
	}
	s.strays.Add(1)
	if err := syscall.Kill(-pgrp, syscall.SIGINT); err != nil {
		return fmt.Errorf("interrupt bash: %w", err)
	}
	return nil
}

// ErrNotRunning: SignalForeground was called while no cell ran.
var ErrNotRunning = errors.New("no cell running")

// SignalForeground sends sig to the terminal's foreground process group
// while a cell runs, as a key at a terminal (Ctrl-\) would: bash, which
// being interactive ignores SIGQUIT, and the cell's programs, which take
// it their way (die of it by default). ErrNotRunning while no cell runs,
// backend.ErrClosed once bash has exited.
func (s *Shell) SignalForeground(sig syscall.Signal) error {
	if !s.Alive() {
		return fmt.Errorf("signal bash: %w", backend.ErrClosed)
	}
	if !s.busy.Load() {
		return fmt.Errorf("signal bash: %w", ErrNotRunning)
	}
	pgrp, err := shellForeground(s.master)
	if err != nil || pgrp <= 0 {
		pgrp = s.Pid()
	}
	if err := syscall.Kill(-pgrp, sig); err != nil {
		return fmt.Errorf("signal bash: %w", err)
	}
	return nil
}

// Close asks an idle bash to exit, waits up to Grace, then kills what is
// left of its session and releases everything. Safe to call more than once.
func (s *Shell) Close() error {
	if s.closed.CompareAndSwap(false, true) && s.busy.CompareAndSwap(false, true) {
		// Idle: nobody else writes to the terminal now.
		if _, err := s.master.WriteString("builtin exit 0\n"); err == nil {
			t := time.NewTimer(s.opts.Grace)
			select {
			case <-s.exited:
			case <-t.C:
			}
			t.Stop()
		}
	}
	return s.finish()
}

// Kill sends SIGKILL to bash's whole session and releases everything; it
// returns once bash is reaped and the goroutines are done. Safe twice.
func (s *Shell) Kill() error {
	s.closed.Store(true)
	return s.finish()
}

// finish kills any leftover of the session (bash, background jobs), stops
// the reader and waiter and removes the cell directory.
func (s *Shell) finish() error {
	s.finishing.Do(func() {
		s.kill()
		<-s.exited
		close(s.quit)
		err := s.master.Close()
		s.wg.Wait()
		s.finishErr = errors.Join(err, s.cells.remove())
		if s.finishErr != nil {
			s.finishErr = fmt.Errorf("close bash: %w", s.finishErr)
		}
	})
	return s.finishErr
}

// kill sends SIGKILL to the session. Once bash is reaped nothing is sent:
// its reaper ended what bash's session held when bash exited, and bash's
// pid, the session id a scan would look for, may be another process's by
// now.
func (s *Shell) kill() {
	select {
	case <-s.exited:
	default:
		s.killed.Store(true)
		shellKillSession(s.Pid())
	}
}

// Defaults of Options.
const (
	DefaultStartTimeout = 10 * time.Second
	DefaultGrace        = 2 * time.Second
)
