package testkit

import (
	"testing"
	"time"

	"github.com/evalhost/evalhost/internal/leakcheck"
)

// Registry sets up what a test of a sessions registry needs, without
// importing package sessions (whose own tests use it): it skips without
// Python, arms a watchdog of limit and leak checks with leaks, calls open,
// and closes what open returned when the test ends, before the leak check
// runs.
func Registry[R interface{ Close() error }](t *testing.T, limit time.Duration, leaks leakcheck.Options, open func() R) R {
	t.Helper()
	Python(t)
	t.Cleanup(leakcheck.Watchdog(t, limit))
	leakcheck.Check(t, leaks)
	r := open()
	t.Cleanup(func() {
		if err := r.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return r
}
