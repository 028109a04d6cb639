package testkit

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// WaitParked waits until one goroutine of this process has every string
// of in on its stack (function names, such as "(*conn).waitWrite("): a
// goroutine blocked at a known point, where a sleep would only guess that
// it got there. It fails tb after 30 s, naming in.
func WaitParked(tb testing.TB, in ...string) {
	tb.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Millisecond) {
		for _, g := range strings.Split(string(allStacks()), "\n\n") {
			if containsAll(g, in) {
				return
			}
		}
		if time.Now().After(deadline) {
			tb.Fatalf("no goroutine's stack showed %q within 30 s", in)
		}
	}
}

func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// allStacks is every goroutine's stack, however long (a buffer too short
// for them drops the last).
func allStacks() []byte {
	for buf := make([]byte, 1<<20); ; buf = make([]byte, 2*len(buf)) {
		if n := runtime.Stack(buf, true); n < len(buf) {
			return buf[:n]
		}
	}
}
