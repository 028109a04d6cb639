package main

import (
	"context"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The signals are enabled by the handling goroutine, after interruptible
// returns: stop right away still waits for them (no registration outlives
// the run, no deadlock), and once enabled a SIGTERM no interpreter takes
// counts as Ctrl-C (the run's context ends) instead of killing the process.
func TestInterruptsEnabledOffTheCaller(t *testing.T) {
	for range 50 {
		_, in := interruptible(func() {}, interruptOpts{})
		if n := in.stop(); n != 0 {
			t.Fatalf("stop says %d interrupts; none came", n)
		}
	}
	ctx, in := interruptible(func() {}, interruptOpts{})
	defer in.stop()
	select {
	case <-in.enabled:
	case <-time.After(10 * time.Second):
		t.Fatal("the signals were never enabled")
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("a SIGTERM did not end the run's context")
	}
	if ctx.Err() != context.Canceled || syscall.Signal(in.fatal.Load()) != syscall.SIGTERM {
		t.Fatalf("context %v, fatal %d; want cancelled by SIGTERM", context.Cause(ctx), in.fatal.Load())
	}
}

// A storm of one signal while a forward is slow (an attached run's round
// trip to the background process) does not crowd out another signal: a
// SIGTERM after hundreds of SIGUSR1 still reaches the forwarder, as the
// kernel keeps one of each signal pending for python3 (same-numbered ones
// coalesce; different ones are never lost).
func TestInterruptsStormLosesNoOtherSignal(t *testing.T) {
	release := make(chan struct{})
	term := make(chan struct{}, 1)
	forward := func(sig syscall.Signal) bool {
		switch sig {
		case syscall.SIGUSR1:
			<-release
		case syscall.SIGTERM:
			term <- struct{}{}
		}
		return true
	}
	_, in := interruptible(func() {}, interruptOpts{forward: forward})
	defer in.stop()
	var once sync.Once
	open := func() { once.Do(func() { close(release) }) }
	defer open() // before stop, which waits for the handler
	<-in.enabled
	for range 300 {
		if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Microsecond) // the runtime coalesces what is pending at once
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	open() // the slow forward ends; what is pending is handled
	select {
	case <-term:
	case <-time.After(10 * time.Second):
		t.Fatal("the SIGTERM sent after a storm of SIGUSR1 never reached the forwarder")
	}
}
