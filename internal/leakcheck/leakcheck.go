package leakcheck

import (
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// settle is how long teardown may take after the test's cleanups: goroutines
// exit and children are reaped asynchronously. Only a leak waits it out,
// so it is generous: a loaded machine (CI) stretches teardown.
// A variable so this package's tests of leaks need not wait it out.
var settle = 30 * time.Second

// Options say what a check covers beyond goroutines and descendant processes.
type Options struct {
	// FDs also fails on file descriptors opened and not closed.
	FDs bool
	// IgnoreProcess exempts a descendant, and every process below it, by its
	// command line (arguments joined by spaces): for a server that outlives
	// its users by design.
	IgnoreProcess func(cmdline string) bool
	// IgnorePIDs exempts these descendants, and every process below them,
	// for such a server whose command line does not tell it from others.
	IgnorePIDs []int
}

// Check takes a baseline now and registers a cleanup that fails tb on what
// outlived it. Call it before starting what it covers: cleanups run
// last-registered first, so those that close what the test started run
// before the check.
func Check(tb testing.TB, o Options) {
	tb.Helper()
	b := take(o)
	tb.Cleanup(func() {
		tb.Helper()
		b.check(tb)
	})
}

// baseline is what this process owned before the test.
type baseline struct {
	o          Options
	goroutines map[string]bool   // by id
	fds        map[string]string // descriptor → what it refers to
}

func take(o Options) baseline {
	b := baseline{o: o, goroutines: goroutineIDs()}
	if o.FDs {
		startPoller.Do(openPipe)
		b.fds = openFDs()
	}
	return b
}

// startPoller makes the runtime open its poller's descriptors (on Linux an
// epoll instance and an eventfd) before the first baseline: it opens them
// at the first pollable file, a pipe, and keeps them, and the test that
// was first in its process counted them as its leak.
var startPoller sync.Once

func openPipe() {
	if r, w, err := os.Pipe(); err == nil {
		r.Close()
		w.Close()
	}
}

// check waits for teardown to settle, then reports what leaked.
func (b baseline) check(tb testing.TB) {
	tb.Helper()
	for deadline := time.Now().Add(settle); !b.clean() && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if leaked := newGoroutines(b.goroutines); len(leaked) > 0 {
		tb.Errorf("%d goroutines leaked:\n\n%s\n\nall goroutines:\n\n%s", len(leaked), strings.Join(leaked, "\n\n"), stacks())
	}
	if b.o.FDs {
		if now := openFDs(); len(now) > len(b.fds) {
			tb.Errorf("%d file descriptors leaked; new since the test began: %s", len(now)-len(b.fds), added(b.fds, now))
		}
	}
	if left := descendants(b.o); len(left) > 0 {
		tb.Errorf("processes left behind (now killed): %v", left)
		for _, p := range left {
			_ = syscall.Kill(p.pid, syscall.SIGKILL)
		}
	}
}

func (b baseline) clean() bool {
	return len(newGoroutines(b.goroutines)) == 0 &&
		(!b.o.FDs || len(openFDs()) <= len(b.fds)) &&
		len(descendants(b.o)) == 0
}
