package main

import (
	"context"
	"os"
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
