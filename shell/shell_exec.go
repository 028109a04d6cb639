package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/evalhost/evalhost/backend"
	"github.com/evalhost/evalhost/frames"
)

// After bash exits, output still in flight is read until the pty reports EIO
// or stays quiet this long; shellDrainMax caps it when a surviving background
// job keeps writing.
const (
	shellDrainQuiet = 50 * time.Millisecond
	shellDrainMax   = time.Second
)

// Execute runs req.Code as one cell: started, then stdout frames (the pty
// merges stdout and stderr), all emitted from this goroutine before it
// returns the done frame. Status is ok when the cell's last exit status is 0,
// else error after an error frame (ename "ExitStatus", evalue "exit status
// N"). req.Cwd and req.Env are applied (cd, export/unset) before the cell;
// req.Argv's arguments after the first become the shell's positional
// parameters ($1..., set -- in the shell, so they last into later cells
// until a cell or another Argv changes them) and, with req.File set, its
// first is $0 (bash's own otherwise).
//
// When ctx ends, the foreground job is interrupted; a cell that ends within
// Grace returns done with Cancelled set and a nil error, else bash's session
// is killed and the error wraps backend.ErrKilled. A cell that exits the shell
// returns done with status error and an error frame "shell exited with
// status N", and the Shell is no longer Alive; that is not a death. When bash
// is killed by a signal the error is a *backend.DeathError.
func (s *Shell) Execute(ctx context.Context, req frames.Request, emit func(frames.Frame)) (frames.Frame, error) {
	if req.Exit {
		return frames.Frame{}, errors.New("sh: an exit request is not a cell; call Close")
	}
	if s.closed.Load() {
		return frames.Frame{}, fmt.Errorf("sh cell %q: %w", req.ID, backend.ErrClosed)
	}
	if !s.busy.CompareAndSwap(false, true) {
		return frames.Frame{}, fmt.Errorf("sh cell %q: %w", req.ID, backend.ErrBusy)
	}
	defer s.busy.Store(false)
	if s.closed.Load() {
		return frames.Frame{}, fmt.Errorf("sh cell %q: %w", req.ID, backend.ErrClosed)
	}
	select {
	case <-s.exited:
		return frames.Frame{}, fmt.Errorf("sh cell %q: %w", req.ID, s.deathError())
	default:
	}
	if req.ID == "" {
		req.ID = "c" + strconv.Itoa(s.count+1)
	}
	file := filepath.Join(s.dir, "cell.sh")
	// An interrupt that may have reached bash at its prompt: this line
	// prints a sync marker, and what came before it is looked at (feed).
	sync := ""
	strays := s.strays.Swap(0)
	if strays > 0 {
		sync = shellSyncLine(s.nonce, s.count+1)
	}
	setup, err := shellSetupScript(req)
	if err != nil {
		s.strays.Add(strays) // the next cell syncs instead
		return frames.Frame{}, fmt.Errorf("sh cell %q: %w", req.ID, err)
	}
	setupFile := ""
	if setup != "" {
		setupFile = filepath.Join(s.dir, "setup.sh")
		if err := os.WriteFile(setupFile, []byte(setup), 0o600); err != nil {
			s.strays.Add(strays)
			return frames.Frame{}, fmt.Errorf("sh cell %q: write setup file: %w", req.ID, err)
		}
	}
	line := shellCellLine(s.count+1, file, setupFile, req, sync)
	if err := os.WriteFile(file, []byte(req.Code), 0o600); err != nil {
		s.strays.Add(strays)
		return frames.Frame{}, fmt.Errorf("sh cell %q: write cell file: %w", req.ID, err)
	}
	s.count++
	emit(frames.Frame{Type: frames.TypeStarted, ID: req.ID})
	c := shellCell{s: s, id: req.ID, n: s.count, emit: emit, strays: int(strays)}
	if err := shellQuietTTY(s.master); err == nil {
		_, err = s.master.WriteString(line)
	}
	// A failed write means bash is gone; run's exit path reports how.
	return c.run(ctx)
}

// shellCell is the state of one Execute.
type shellCell struct {
	s         *Shell
	id        string
	n         int
	emit      func(frames.Frame)
	cancelled bool
	signalled map[string]bool // the session's processes at the last interrupt
	// strays counts the interrupts that may have printed before the cell's
	// sync marker (Shell.strays); while it is above 0 the marker is still to
	// come, and the text before it is looked at (hold).
	strays int
	held   []byte // an empty line's start before the sync marker, that may be theirs
}

func (c *shellCell) run(ctx context.Context) (frames.Frame, error) {
	s := c.s
	cancel := ctx.Done()
	var grace, recheck <-chan time.Time
	again := shellRecheckFirst
	for {
		out := s.out
		if s.outDone {
			out = nil
		}
		select {
		case ch, ok := <-out:
			if !ok {
				s.outDone = true
				continue
			}
			if status, found := c.feed(ch.data); found {
				return c.finished(status), nil
			}
		case <-s.exited:
			return c.exited()
		case <-cancel:
			cancel = nil
			c.cancelled = true
			c.interrupt()
			t := time.NewTimer(s.opts.Grace)
			defer t.Stop()
			grace = t.C
			recheck = time.After(again)
		case <-recheck:
			c.interrupt()
			again *= 2
			recheck = time.After(again)
		case <-grace:
			grace = nil
			s.kill() // exited fires next
		}
	}
}

// shellRecheckFirst is when a cancelled cell's terminal is first looked at
// again; the looks then double in interval until the cell ends or the grace.
const shellRecheckFirst = 20 * time.Millisecond

// interrupt sends SIGINT to the terminal's foreground process group, the
// first time and again only when the session has a process the last one
// could not reach: new since, or one that has exec'd since (a child forked
// just before the signal runs bash's handlers until it execs). An interrupt
// that lands while bash forks a job reaches bash alone, which then runs the
// job (sleep, say) and waits for it; the job gets the next one. A cell whose
// processes all had the interrupt is not interrupted twice.
func (c *shellCell) interrupt() {
	s := c.s
	procs := shellSessionProcs(s.Pid())
	if c.signalled != nil && !slices.ContainsFunc(procs, func(p string) bool { return !c.signalled[p] }) {
		return
	}
	c.signalled = make(map[string]bool, len(procs))
	for _, p := range procs {
		c.signalled[p] = true
	}
	pgrp, err := shellForeground(s.master)
	if err != nil || pgrp <= 0 {
		pgrp = s.Pid()
	}
	s.strays.Add(1) // this one may land after the cell's end
	_ = syscall.Kill(-pgrp, syscall.SIGINT)
}

// shellSessionProcs names the live processes of session sid by pid and
// the program they run; empty where /proc is not.
func shellSessionProcs(sid int) []string {
	pids := shellSessionPids(sid)
	out := make([]string, 0, len(pids))
	for _, pid := range pids {
		comm, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
		out = append(out, strconv.Itoa(pid)+":"+string(comm))
	}
	return out
}

// feed scans pty output, emits its text and reports this cell's marker.
// Markers of other cells (an interrupt racing a cell's end) are dropped.
func (c *shellCell) feed(data []byte) (status int, found bool) {
	s := c.s
	if data != nil {
		s.scan.Write(data)
	}
	for {
		text, payload, isMark, ok := s.scan.Next()
		if !ok {
			return 0, false
		}
		if !isMark {
			if c.strays > 0 {
				c.hold(text)
			} else {
				c.text(text)
			}
			continue
		}
		if c.strays > 0 && payload == "S:"+strconv.Itoa(c.n) {
			c.release()
			continue
		}
		n, st, ok := shellParseMark(payload)
		if ok && n == c.n {
			if c.strays > 0 { // the line was aborted after the marker number, before the sync
				c.release()
			}
			return st, true
		}
	}
}

// hold passes on text that came before the sync marker, less the empty
// lines that open it, up to one per interrupt sent (strays): what an
// interrupt at bash's prompt prints there is a line break, and the start of
// a marker that interrupt cut (bash's printf checks for one between
// characters). Which of such lines were a background job's cannot be told;
// once anything else has come, nothing more is dropped, so a job's output is
// kept whole. Only an empty line's unfinished start is held back.
func (c *shellCell) hold(text []byte) {
	b := append(c.held, text...)
	c.held = nil
	for len(b) > 0 && c.strays > 0 {
		n, complete := shellPromptLine(b, c.s.scan.prefix)
		switch {
		case n > 0 && complete:
			c.strays--
			b = b[n:]
		case n > 0: // an empty line's start, or text: the next bytes tell
			c.held = append([]byte(nil), b...)
			return
		default: // text: what follows is output, whatever it looks like
			c.strays = 0
		}
	}
	c.text(b)
	if c.strays == 0 {
		c.release()
	}
}

// shellPromptLine measures the empty line at the start of b: n > 0 and
// complete when b opens with one ("^C"? cut? "\r"* "\n", cut a strict start
// of the marker prefix), n > 0 and not complete when b is all a start of
// one, 0 when b opens with text. A run of carriage returns longer than any
// terminal's is text.
func shellPromptLine(b, prefix []byte) (n int, complete bool) {
	j := 0
	switch {
	case bytes.HasPrefix(b, []byte("^C")):
		j = 2
	case len(b) == 1 && b[0] == '^':
		return 1, false
	}
	if k := shellCommonPrefix(b[j:], prefix); k > 0 {
		if k == len(prefix) {
			return 0, false // a whole prefix is the scanner's
		}
		j += k
	}
	for i := 0; j < len(b) && b[j] == '\r' && i < 64; i++ {
		j++
	}
	switch {
	case j < len(b) && b[j] == '\n':
		return j + 1, true
	case j == len(b):
		return j, false
	}
	return 0, false
}

// shellCommonPrefix is the length of the longest common prefix of a and b.
func shellCommonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// release ends the wait for the sync marker: what was held back is output
// after all.
func (c *shellCell) release() {
	held := c.held
	c.strays, c.held = 0, nil
	c.text(held)
}

func (c *shellCell) text(b []byte) {
	if len(b) == 0 {
		return
	}
	c.s.tail.Write(b)
	c.emit(frames.Frame{Type: frames.TypeStdout, ID: c.id, Data: string(b)})
}

// shellParseMark parses a cell marker payload "N:STATUS".
func shellParseMark(p string) (n, status int, ok bool) {
	a, b, found := strings.Cut(p, ":")
	if !found {
		return 0, 0, false
	}
	n, err1 := strconv.Atoi(a)
	status, err2 := strconv.Atoi(b)
	return n, status, err1 == nil && err2 == nil
}

func (c *shellCell) finished(status int) frames.Frame {
	done := frames.Frame{Type: frames.TypeDone, ID: c.id, Status: frames.StatusOK,
		ExecutionCount: c.n, Cancelled: c.cancelled}
	if status != 0 {
		c.emit(frames.Frame{Type: frames.TypeError, ID: c.id, Ename: "ExitStatus",
			Evalue: fmt.Sprintf("exit status %d", status)})
		done.Status = frames.StatusError
	}
	return done
}

// exited handles bash ending during the cell: output still in flight is
// delivered first, then the ending is classified.
func (c *shellCell) exited() (frames.Frame, error) {
	s := c.s
	if status, found := s.drain(c); found {
		return c.finished(status), nil // the cell ended just before bash did
	}
	switch {
	case s.killed.Load() && s.closed.Load():
		return frames.Frame{}, fmt.Errorf("sh cell %q: %w", c.id, backend.ErrClosed)
	case s.killed.Load():
		return frames.Frame{}, fmt.Errorf("sh cell %q: %w", c.id, backend.ErrKilled)
	}
	ws, ok := s.waitStatus, s.waitErr == nil
	if !ok || ws.Signaled() {
		return frames.Frame{}, fmt.Errorf("sh cell %q: %w", c.id, s.deathError())
	}
	c.emit(frames.Frame{Type: frames.TypeError, ID: c.id, Ename: "ShellExited",
		Evalue: fmt.Sprintf("shell exited with status %d", ws.ExitStatus())})
	return frames.Frame{Type: frames.TypeDone, ID: c.id, Status: frames.StatusError,
		ExecutionCount: c.n, Cancelled: c.cancelled}, nil
}

// drain reads what bash and its children wrote before bash was reaped. With
// a cell it emits the text and stops at the cell's marker; without one (a
// failed start) the text goes to the tail only.
func (s *Shell) drain(c *shellCell) (status int, found bool) {
	quiet := time.NewTimer(shellDrainQuiet)
	defer quiet.Stop()
	limit := time.NewTimer(shellDrainMax)
	defer limit.Stop()
	for !s.outDone {
		select {
		case ch, ok := <-s.out:
			if !ok {
				s.outDone = true
				break
			}
			if c != nil {
				if status, found := c.feed(ch.data); found {
					return status, true
				}
			} else if ch.data != nil {
				s.scan.Write(ch.data)
				s.tail.Write(s.scan.Rest())
			}
			quiet.Reset(shellDrainQuiet)
		case <-quiet.C:
			s.flush(c)
			return 0, false
		case <-limit.C:
			s.flush(c)
			return 0, false
		}
	}
	s.flush(c)
	return 0, false
}

// flush passes on whatever the scanner still holds.
func (s *Shell) flush(c *shellCell) {
	rest := s.scan.Rest()
	if c != nil {
		if c.strays > 0 { // bash ended before the sync marker: all of it is output
			c.release()
		}
		c.text(rest)
	} else {
		s.tail.Write(rest)
	}
}

// deathError describes how bash ended; valid once exited is closed.
func (s *Shell) deathError() error {
	if s.closed.Load() {
		return backend.ErrClosed
	}
	ws, ok := s.waitStatus, s.waitErr == nil
	switch {
	case !ok:
		return &backend.DeathError{ExitCode: -1, Signal: fmt.Sprint(s.waitErr), StderrTail: s.tail.String()}
	case ws.Signaled():
		return &backend.DeathError{ExitCode: -1, Signal: ws.Signal().String(), StderrTail: s.tail.String()}
	default:
		return &backend.DeathError{ExitCode: ws.ExitStatus(), StderrTail: s.tail.String()}
	}
}
