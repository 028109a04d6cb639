package sessions

import "syscall"

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
	return r.signal(id, func(s signaler) error { return s.Signal(sig) })
}

// SignalGroup is Signal for the interpreter's whole process group, the
// cell's children with it, as a terminal signals its foreground job: for
// job control (SIGSTOP at Ctrl-Z, SIGCONT at fg). A process the cell moved
// to another group or session is not reached.
func (r *Registry) SignalGroup(id string, sig syscall.Signal) bool {
	return r.signal(id, func(s signaler) error { return s.SignalGroup(sig) })
}

func (r *Registry) signal(id string, send func(signaler) error) bool {
	sent := false
	for _, s := range r.live() { // per-call ones too: a one-shot run's
		if s.key.Session != id {
			continue
		}
		s.mu.Lock()
		ex := s.execs[LangPython]
		s.mu.Unlock()
		if sg, ok := ex.(signaler); ok && ex.Alive() && send(sg) == nil {
			sent = true
		}
	}
	return sent
}
