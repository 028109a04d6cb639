package daemon

import (
	"fmt"
	"syscall"

	"github.com/tidwall/gjson"

	"github.com/evalhost/evalhost/sessions"
)

// OpSignal passes a signal on to the cell an eval of the client's runs,
// as a one-shot run passes the signals it is sent on to its interpreter:
// "signal" is the number, "to" says how ([SignalTo]), "n" is echoed in
// the answer, a [Signalled] line.
const OpSignal = "signal"

// TypeSignalled answers OpSignal.
const TypeSignalled = "signalled"

// SignalTo values: how a signal reaches the cell, as sessions' Signal,
// SignalCell and SignalForeground send it.
const (
	SignalInterpreter = "interpreter" // the Python interpreter alone (kill of python3's pid)
	SignalCell        = "cell"        // the interpreter alone, or a shell cell's foreground job
	SignalForeground  = "foreground"  // the cell's process group, as a terminal's key sends it
	// SignalJob is job control: SIGTSTP stops the cell's interpreter (its
	// process group, the cell's time limit held: sessions' Suspend) as
	// Ctrl-Z stops a one-shot run's, SIGCONT continues it (Resume). A
	// SIGTSTP for a request still queued stops its cell as it starts. What
	// a client stopped and did not continue is continued when it leaves.
	SignalJob = "job"
)

// signalTo sends a signal to the session the request runs in: that name
// in that cwd (the same name in another cwd is another's).
var signalTo = map[string]func(*sessions.Registry, sessions.Key, syscall.Signal) bool{
	SignalInterpreter: func(r *sessions.Registry, k sessions.Key, sig syscall.Signal) bool {
		return r.SignalIn(k.Session, k.Cwd, sig)
	},
	SignalCell: func(r *sessions.Registry, k sessions.Key, sig syscall.Signal) bool {
		return r.SignalCellIn(k.Session, k.Cwd, sig)
	},
	SignalForeground: func(r *sessions.Registry, k sessions.Key, sig syscall.Signal) bool {
		return r.SignalForegroundIn(k.Session, k.Cwd, sig)
	},
	SignalJob: jobControl,
}

// jobControl is SignalJob's: Suspend at SIGTSTP, Resume at SIGCONT.
func jobControl(r *sessions.Registry, k sessions.Key, sig syscall.Signal) bool {
	switch sig {
	case syscall.SIGTSTP:
		return r.SuspendIn(k.Session, k.Cwd)
	case syscall.SIGCONT:
		return r.ResumeIn(k.Session, k.Cwd)
	}
	return false
}

// Signalled says whether a cell's process got the signal: false when the
// eval is not running a cell (queued, between cells, ended) or its
// interpreter takes no signals; the client then does what a one-shot run
// does with a signal no interpreter took.
type Signalled struct {
	ID   string `json:"id"`
	N    int64  `json:"n"`
	Sent bool   `json:"sent"`
	Type string `json:"type"`
}

// signal answers OpSignal at once, off the eval's queue: a signal is for
// the cell that runs now.
func (c *conn) signal(line []byte, id string) {
	n := gjson.GetBytes(line, "signal").Int()
	to := gjson.GetBytes(line, "to").String()
	send := signalTo[to]
	switch {
	case send == nil:
		c.refuse(id, OpSignal, fmt.Sprintf(`"to" must be %q, %q, %q or %q, not %q`, SignalInterpreter, SignalCell, SignalForeground, SignalJob, to))
		return
	case n < 1 || n > 64:
		c.refuse(id, OpSignal, fmt.Sprintf(`"signal" must be a signal number from 1 to 64, not %d`, n))
		return
	case n == int64(syscall.SIGSTOP):
		// Not continued when the client leaves, nor its time limit held:
		// the cell could only be killed, and the session's state lost.
		c.refuse(id, OpSignal, fmt.Sprintf(`SIGSTOP is not passed on; stop the cell with %q and SIGTSTP (%d)`, SignalJob, syscall.SIGTSTP))
		return
	case to == SignalJob && n != int64(syscall.SIGTSTP) && n != int64(syscall.SIGCONT):
		c.refuse(id, OpSignal, fmt.Sprintf(`job control takes SIGTSTP (%d) or SIGCONT (%d), not %d`, syscall.SIGTSTP, syscall.SIGCONT, n))
		return
	}
	fl, key := c.flight(id)
	var sent bool
	switch {
	case fl == nil:
	case to == SignalJob:
		sent = c.jobSignal(fl, key, syscall.Signal(n))
	default:
		// Only a request that runs: a queued one would signal the cell of
		// another client's request in its session.
		sent = key != nil && fl.running.Load() && send(c.srv.reg, *key, syscall.Signal(n))
	}
	c.enc.Line(Signalled{ID: id, N: gjson.GetBytes(line, "n").Int(), Sent: sent, Type: TypeSignalled})
}

// jobSignal is SignalJob's for request fl. One that runs is stopped or
// continued now. A Ctrl-Z for one still queued (behind another client's,
// perhaps stopped, which is not this client's to stop) is kept, and the
// request is stopped as it starts (stopAsStarted, at its first frame: the
// cell's first milliseconds run), as a stopped python3 runs nothing; an fg
// before that forgets it. What this client stopped is
// continued when it leaves.
func (c *conn) jobSignal(fl *flight, key *sessions.Key, sig syscall.Signal) bool {
	fl.jobMu.Lock()
	defer fl.jobMu.Unlock()
	if key == nil || !fl.running.Load() {
		fl.stopAsked = sig == syscall.SIGTSTP
		return false
	}
	fl.stopAsked = false
	sent := jobControl(c.srv.reg, *key, sig)
	if sent || sig == syscall.SIGCONT {
		// Continued at the client's end even if the cell ended meanwhile:
		// Resume of a session that runs nothing is a no-op.
		c.markStopped(*key, sig == syscall.SIGTSTP)
	}
	return sent
}

// stopAsStarted stops the session of a request that starts after a Ctrl-Z
// its client sent while it was queued (jobSignal).
func (c *conn) stopAsStarted(fl *flight) {
	fl.jobMu.Lock()
	defer fl.jobMu.Unlock()
	if !fl.stopAsked {
		return
	}
	fl.stopAsked = false
	c.mu.Lock()
	key := fl.key
	c.mu.Unlock()
	if key != nil && c.srv.reg.SuspendIn(key.Session, key.Cwd) {
		c.markStopped(*key, true)
	}
}

func (c *conn) markStopped(key sessions.Key, stopped bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped == nil {
		c.stopped = map[sessions.Key]bool{}
	}
	c.stopped[key] = stopped
}

// continueStopped continues what the client stopped and left stopped (it
// ended while stopped: killed, its terminal gone), so the cancel that
// follows reaches an interpreter that can take its interrupt.
func (c *conn) continueStopped() {
	c.mu.Lock()
	stopped := c.stopped
	c.stopped = nil
	c.mu.Unlock()
	for k, still := range stopped {
		if still {
			c.srv.reg.ResumeIn(k.Session, k.Cwd)
		}
	}
}
