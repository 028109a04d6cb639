package main

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// earlyQuit holds SIGQUIT from run's start until its interrupts take it
// over (interruptible): without it, a Ctrl-\ in that window (the flags, the
// reading of the cells: `run -` waits for stdin's end, the interpreter's
// start) got Go's dump of every goroutine and exit 2, where python3 dies of
// SIGQUIT at once. Nothing runs yet that a SIGQUIT could go to, so run dies
// of it at once too (what it started, a spare reaper, ends with it).
var earlyQuit struct {
	mu   sync.Mutex
	stop func()        // nil: not held, or handed over
	held chan struct{} // closed once the hold is in place
}

// holdQuitEarly starts holding SIGQUIT for run (see earlyQuit). The hold is
// taken on a goroutine of its own, off run's way to its interpreter: the
// first Notify starts the runtime's signal-mask thread and makes a round
// trip with it (~0.2 ms of every one-shot run). What could wait for long
// meanwhile (a script read from stdin or a FIFO) waits for it first
// (awaitQuitHeld), so a Ctrl-\ typed there is held.
func holdQuitEarly() {
	ch := make(chan os.Signal, 1)
	held := make(chan struct{})
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		signal.Notify(ch, syscall.SIGQUIT)
		close(held)
		select {
		case <-ch:
			exitAs(dieOf(syscall.SIGQUIT))
		case <-done:
		}
	}()
	earlyQuit.mu.Lock()
	earlyQuit.held = held
	earlyQuit.stop = func() { <-held; signal.Stop(ch); close(done); wg.Wait() }
	earlyQuit.mu.Unlock()
}

// awaitQuitHeld returns once holdQuitEarly's hold is in place, or at once
// when nothing is held.
func awaitQuitHeld() {
	earlyQuit.mu.Lock()
	held := earlyQuit.held
	earlyQuit.mu.Unlock()
	if held != nil {
		<-held
	}
}

// handOverQuit ends holdQuitEarly's hold once interruptible has its own
// SIGQUIT handling in place (a SIGQUIT between the two is seen by both:
// no cell runs yet, so both end the run of it). Safe to call when nothing
// is held, and more than once.
func handOverQuit() {
	earlyQuit.mu.Lock()
	stop := earlyQuit.stop
	earlyQuit.stop, earlyQuit.held = nil, nil
	earlyQuit.mu.Unlock()
	if stop != nil {
		stop()
	}
}
