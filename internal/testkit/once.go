package testkit

import (
	"sync"
	"testing"
)

// Once is a package's expensive set-up (a gateway, say), run by the first
// test that needs it, so tests and fuzz workers without that need never
// pay for it.
type Once struct {
	once sync.Once
	skip string
}

// Run runs setup the first time it is called; setup returns why the tests
// that need it must skip, or "". Later calls return the same reason.
func (o *Once) Run(setup func() (skip string)) string {
	o.once.Do(func() { o.skip = setup() })
	return o.skip
}

// Need is Run that skips tb, saying what is unavailable and why.
func (o *Once) Need(tb testing.TB, what string, setup func() (skip string)) {
	tb.Helper()
	if skip := o.Run(setup); skip != "" {
		tb.Skip(what + " unavailable: " + skip)
	}
}
