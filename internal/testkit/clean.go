package testkit

import (
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
)

// Clean arms a deadlock watchdog of limit and, at cleanup, fails on
// goroutines, file descriptors and processes that outlived the test. Call it
// first, so it checks after the test's other cleanups closed what they
// started.
func Clean(t *testing.T, limit time.Duration) {
	t.Helper()
	t.Cleanup(leakcheck.Watchdog(t, limit))
	leakcheck.Check(t, leakcheck.Options{FDs: true})
}
