package testkit

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// WaitState waits until process pid's state (/proc/PID/stat: 'R', 'S',
// 'T' stopped, ...) is state, or, with state 0, until it is anything but
// stopped ('T', 't'), gone included: an event to await, where a signal's
// effect is otherwise only guessed at with a sleep. It fails tb after 20 s.
func WaitState(tb testing.TB, pid int, state byte) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil && state == 0 && os.IsNotExist(err) {
			return // gone: continued, and ended
		}
		if err != nil {
			tb.Fatal(err)
		}
		s := string(b)
		if i := strings.LastIndexByte(s, ')'); i > 0 && len(s) > i+2 {
			got := s[i+2]
			if got == state || state == 0 && got != 'T' && got != 't' {
				return
			}
		}
		if time.Now().After(deadline) {
			tb.Fatalf("process %d never reached state %q: %s", pid, state, b)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
