package leakcheck

import (
	"runtime"
	"strings"
)

// goroutineIDs is the set of goroutines alive now.
func goroutineIDs() map[string]bool {
	ids := map[string]bool{}
	for _, g := range goroutineStacks() {
		ids[goroutineID(g)] = true
	}
	return ids
}

// newGoroutines returns the stacks of the goroutines not in before, leaving
// out the caller's own: an exited goroutine of the baseline cannot hide a
// new one, as it would in a count.
func newGoroutines(before map[string]bool) []string {
	var out []string
	for _, g := range goroutineStacks()[1:] {
		if !before[goroutineID(g)] {
			out = append(out, g)
		}
	}
	return out
}

// goroutineStacks returns each goroutine's stack, the caller's first.
func goroutineStacks() []string {
	return strings.Split(strings.TrimSpace(string(stacks())), "\n\n")
}

// goroutineID reads N from a stack's "goroutine N [state]:" header.
func goroutineID(stack string) string {
	id, _, _ := strings.Cut(strings.TrimPrefix(stack, "goroutine "), " ")
	return id
}

// stacks returns every goroutine's stack, however many there are.
func stacks() []byte {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			return buf[:n]
		}
		buf = make([]byte, 2*len(buf))
	}
}
