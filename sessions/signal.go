package sessions

import (
	"context"
	"syscall"
	"time"
)

// signaler is implemented by executors whose interpreter can be sent a
// signal of the caller's (host.Process).
type signaler interface {
	Signal(sig syscall.Signal) error
	SignalGroup(sig syscall.Signal) error
}

// Signal sends sig to the Python interpreter of every session with this id
// (any cwd, persistent or per-call) while it runs a cell, as kill(1) of a
// python3 process would: a handler the cell set runs; without one the
// signal's default action applies, and the cell reports the death (in a
// batch, CellResult.Signal). It says whether an interpreter got it: false
// when none is running a cell (not started yet, idle while a shell cell
// runs, or gone) or its backend takes no signals (a gateway kernel), and
// the caller then decides what the signal means instead. For a program passing on what it was sent (evalhost run
// forwards SIGTERM, SIGHUP, SIGUSR1 and SIGUSR2); an interrupt is Eval's
// context, not this.
func (r *Registry) Signal(id string, sig syscall.Signal) bool {
	return r.SignalIn(id, "", sig)
}

// SignalIn is Signal for the session id in directory cwd alone (every
// directory's when cwd is ""), as KillSessionIn is KillSession's: what a
// program that runs one request's cells passes on to them (the background
// process, for the client that sent the request).
func (r *Registry) SignalIn(id, cwd string, sig syscall.Signal) bool {
	return r.signal(id, r.cwdMatcher(cwd), func(s signaler) error { return s.Signal(sig) })
}

// SignalGroup is Signal for the interpreter's whole process group, the
// cell's children with it, as a terminal signals its foreground job. A
// process the cell moved to another group or session is not reached. For
// job control use Suspend and Resume, which hold the cell's timeout too.
func (r *Registry) SignalGroup(id string, sig syscall.Signal) bool {
	return r.signal(id, r.cwdMatcher(""), func(s signaler) error { return s.SignalGroup(sig) })
}

// foregroundSignaler is implemented by executors whose running cell's
// process group can be sent a signal (host.Process, shell.Shell).
type foregroundSignaler interface {
	SignalForeground(sig syscall.Signal) error
}

// SignalForeground sends sig to the process group of the interpreter of
// every session with this id that is running a cell now, a Python or a
// shell cell, as a terminal sends a key's signal (Ctrl-\'s SIGQUIT) to its
// foreground job: a Python interpreter's group (its handler runs, or it
// dies of the default and the cell reports the death, in a batch
// CellResult.Signal), or the foreground group of bash's terminal (bash
// itself ignores SIGQUIT and SIGINT; the cell's programs take it). It says
// whether one got it: false between cells, before an interpreter started,
// and for a gateway kernel, and the caller then decides what it means.
func (r *Registry) SignalForeground(id string, sig syscall.Signal) bool {
	return r.SignalForegroundIn(id, "", sig)
}

// SignalForegroundIn is SignalForeground for the session id in directory
// cwd alone (SignalIn).
func (r *Registry) SignalForegroundIn(id, cwd string, sig syscall.Signal) bool {
	sent := false
	for _, ex := range r.execsOf(id, r.cwdMatcher(cwd), "") {
		if fs, ok := ex.(foregroundSignaler); ok && fs.SignalForeground(sig) == nil {
			sent = true
		}
	}
	return sent
}

// SignalCell sends sig to what runs a cell of session id now, as kill(1)
// sends it to one program: a Python interpreter itself, not its process
// group (Signal's way: the cell's children are left alone, as a python3
// process's are by kill of its pid), or a shell cell's foreground job
// (SignalForeground's: bash, interactive, ignores the signals a
// terminal's keys send, so the cell's programs are the ones to get it).
// It says whether one got it: false between cells, before an interpreter
// started, and for a gateway kernel. For a signal sent to a program that
// passes it on (evalhost run's SIGQUIT from kill, not from its terminal).
func (r *Registry) SignalCell(id string, sig syscall.Signal) bool {
	return r.SignalCellIn(id, "", sig)
}

// SignalCellIn is SignalCell for the session id in directory cwd alone
// (SignalIn).
func (r *Registry) SignalCellIn(id, cwd string, sig syscall.Signal) bool {
	sent := false
	for _, ex := range r.execsOf(id, r.cwdMatcher(cwd), "") {
		var err error
		switch e := ex.(type) {
		case signaler:
			err = e.Signal(sig)
		case foregroundSignaler:
			err = e.SignalForeground(sig)
		default:
			continue
		}
		if err == nil {
			sent = true
		}
	}
	return sent
}

// Suspend stops the process group of every Python interpreter of session
// id (SIGSTOP), as a terminal's Ctrl-Z stops its foreground job, and holds
// the timeout of the Python cell running there (and of one sent before
// Resume): a cell's timeout counts the time its interpreter could run, so
// a run stopped for longer than it is not timed out the moment it goes on.
// It says whether an interpreter was stopped; a shell cell's bash is not,
// and its timeout runs on.
func (r *Registry) Suspend(id string) bool {
	return r.SuspendIn(id, "")
}

// SuspendIn is Suspend for the session id in directory cwd alone
// (SignalIn).
func (r *Registry) SuspendIn(id, cwd string) bool {
	return r.eachSession(id, r.cwdMatcher(cwd), (*session).suspend)
}

// Resume continues what Suspend stopped (SIGCONT to the process groups),
// and the cells' timeouts with it. Without a Suspend before it the SIGCONT
// is sent all the same (a group someone else stopped goes on), and no
// timeout changes. It says whether an interpreter got it.
func (r *Registry) Resume(id string) bool {
	return r.ResumeIn(id, "")
}

// ResumeIn is Resume for the session id in directory cwd alone (SignalIn).
func (r *Registry) ResumeIn(id, cwd string) bool {
	return r.eachSession(id, r.cwdMatcher(cwd), (*session).resume)
}

func (r *Registry) eachSession(id string, in func(string) bool, do func(*session) bool) bool {
	done := false
	for _, s := range r.live() { // per-call ones too: a one-shot run's
		if s.key.Session == id && in(s.key.Cwd) && do(s) {
			done = true
		}
	}
	return done
}

func (s *session) suspend() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	ex := s.execs[LangPython]
	sg, ok := ex.(signaler)
	if !ok || !ex.Alive() || sg.SignalGroup(syscall.SIGSTOP) != nil {
		return false
	}
	if !s.suspended {
		s.suspendedAt = time.Now()
	}
	s.suspended = true
	if s.deadline != nil && s.deadlineLang == LangPython {
		s.deadline.hold()
	}
	return true
}

func (s *session) resume() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unsuspendLocked()
	ex := s.execs[LangPython]
	sg, ok := ex.(signaler)
	return ok && ex.Alive() && sg.SignalGroup(syscall.SIGCONT) == nil
}

// unsuspendLocked ends a suspension: at Resume, when the interpreter
// Suspend stopped leaves the session (stopAll, drop: closed, it is
// continued by its Close, host.Process's; killed, it is gone), or when it
// is replaced (it died stopped: its successor runs, and a cell's time
// limit must not stay held, nor the next cell's start count as stopped,
// CellResult.StoppedMs).
func (s *session) unsuspendLocked() {
	if !s.suspended {
		return
	}
	if s.deadline != nil && s.deadlineLang == LangPython {
		s.deadline.resume()
	}
	s.stoppedBefore += time.Since(s.suspendedAt)
	s.suspended = false
}

// stopped is how long Suspend has kept the session's Python interpreter
// stopped in all, a suspension under way included: a Python cell's run
// time leaves it out (CellResult.StoppedMs).
func (s *session) stopped() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.suspended {
		return s.stoppedBefore + time.Since(s.suspendedAt)
	}
	return s.stoppedBefore
}

// startDeadline starts a cell's time limit in lang (withRunDeadline), held
// while the session's Python interpreter is suspended, and makes it the
// one Suspend and Resume hold and continue until the cell ends (stop).
func (s *session) startDeadline(ctx context.Context, limit time.Duration, lang string) (context.Context, func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx, d, cancel := withRunDeadline(ctx, limit, s.suspended && lang == LangPython)
	s.deadline, s.deadlineLang = d, lang
	return ctx, func() {
		cancel()
		s.mu.Lock()
		if s.deadline == d {
			s.deadline = nil
		}
		s.mu.Unlock()
	}
}

func (r *Registry) signal(id string, in func(string) bool, send func(signaler) error) bool {
	sent := false
	for _, ex := range r.execsOf(id, in, LangPython) {
		if sg, ok := ex.(signaler); ok && ex.Alive() && send(sg) == nil {
			sent = true
		}
	}
	return sent
}

// execsOf are the executors of every live session with this id whose cwd
// is in (per-call ones too: a one-shot run's), of language lang, or of
// every language when lang is "".
func (r *Registry) execsOf(id string, in func(string) bool, lang string) []Executor {
	var execs []Executor
	for _, s := range r.live() {
		if s.key.Session != id || !in(s.key.Cwd) {
			continue
		}
		s.mu.Lock()
		for l, ex := range s.execs {
			if ex != nil && (lang == "" || l == lang) {
				execs = append(execs, ex)
			}
		}
		s.mu.Unlock()
	}
	return execs
}
