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
	stop func() // nil: not held, or handed over
}

// holdQuitEarly starts holding SIGQUIT for run (see earlyQuit).
func holdQuitEarly() {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGQUIT)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-ch:
			exitAs(dieOf(syscall.SIGQUIT))
		case <-done:
		}
	}()
	earlyQuit.mu.Lock()
	earlyQuit.stop = func() { signal.Stop(ch); close(done); wg.Wait() }
	earlyQuit.mu.Unlock()
}

// handOverQuit ends holdQuitEarly's hold once interruptible has its own
// SIGQUIT handling in place (a SIGQUIT between the two is seen by both:
// no cell runs yet, so both end the run of it). Safe to call when nothing
// is held, and more than once.
func handOverQuit() {
	earlyQuit.mu.Lock()
	stop := earlyQuit.stop
	earlyQuit.stop = nil
	earlyQuit.mu.Unlock()
	if stop != nil {
		stop()
	}
}
