package main

import (
	"encoding/json"
	"sync"
	"syscall"
	"time"

	"github.com/evalhost/evalhost/daemon"
)

// signalAnswerWait bounds the wait for the background process's answer to
// a signal passed on; one that does not answer is taken as not sent (the
// run then does what it does with a signal no interpreter took), and
// its liveness check says it hangs.
const signalAnswerWait = 2 * time.Second

// attachedSignals passes on to the background process the signals a
// one-shot run passes to its interpreter (SIGTERM, SIGHUP, SIGUSR1,
// SIGUSR2, and SIGQUIT as a Ctrl-\ or as a kill), so a handler the
// session's script set runs, as under a one-shot run (daemon.OpSignal).
type attachedSignals struct {
	client func() *daemon.Client
	ended  chan struct{} // closed when the request's replies are read
	once   sync.Once
	// answers carries the process's Signalled lines from the reader; one
	// signal waits at a time (interrupts handles them in turn), and n
	// tells a late answer from the one awaited.
	answers chan daemon.Signalled
	n       int64
}

func newAttachedSignals(client func() *daemon.Client) *attachedSignals {
	return &attachedSignals{client: client, ended: make(chan struct{}), answers: make(chan daemon.Signalled, 4)}
}

// forward is interruptOpts.forward: the interpreter alone, as kill(1) of
// python3's pid.
func (s *attachedSignals) forward(sig syscall.Signal) bool {
	return s.send(sig, daemon.SignalInterpreter)
}

// quitTo is interruptOpts.quitTo: a Ctrl-\ reaches the cell's process
// group, a kill of run's pid the interpreter alone (quitForwarder's way).
func (s *attachedSignals) quitTo(sig syscall.Signal) bool {
	if keyFromTerminal() {
		return s.send(sig, daemon.SignalForeground)
	}
	return s.send(sig, daemon.SignalCell)
}

// jobControl stops and continues the session's cell with run at Ctrl-Z
// and fg, as a one-shot run's jobControl does its interpreter.
func (s *attachedSignals) jobControl() *jobControl {
	return &jobControl{
		suspend: func() bool { return s.send(syscall.SIGTSTP, daemon.SignalJob) },
		resume:  func() bool { return s.send(syscall.SIGCONT, daemon.SignalJob) },
	}
}

// send asks the process to pass sig on and says whether a cell's process
// got it.
func (s *attachedSignals) send(sig syscall.Signal, to string) bool {
	for drained := false; !drained; { // answers to sends that gave up waiting
		select {
		case <-s.answers:
		default:
			drained = true
		}
	}
	s.n++
	n := s.n
	op := map[string]any{"op": daemon.OpSignal, "id": attachedID, "signal": int(sig), "to": to, "n": n}
	if c := s.client(); c == nil || c.Send(op) != nil {
		return false // not connected yet: no cell runs
	}
	t := time.NewTimer(signalAnswerWait)
	defer t.Stop()
	for {
		select {
		case a := <-s.answers:
			if a.N == n {
				return a.Sent
			}
		case <-s.ended:
			return false
		case <-t.C:
			return false
		}
	}
}

// answer takes a Signalled line the reader read; an answer nobody waits
// for any more is dropped.
func (s *attachedSignals) answer(line []byte) {
	var a daemon.Signalled
	if json.Unmarshal(line, &a) != nil {
		return
	}
	select {
	case s.answers <- a:
	default:
	}
}

// end says the replies are read: no answer comes any more.
func (s *attachedSignals) end() { s.once.Do(func() { close(s.ended) }) }
