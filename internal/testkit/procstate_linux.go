package testkit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// WaitState waits until process pid's state (/proc/PID/stat: 'R', 'S',
// 'T' stopped, ...) is state, or, with state 0, until it is anything but
// stopped ('T', 't'), gone included: an event to await, where a signal's
// effect is otherwise only guessed at with a sleep. It fails tb after 20 s,
// or at once when waiting for a state and the process is gone.
//
// A process is gone when its stat file is not there (ENOENT at the open),
// and also when it was reaped between the open and the read (ESRCH at
// the read): an interpreter under `evalhost run` is reaped by its reaper
// the moment it dies, and under load the test was preempted between the
// two often enough to fail a CI run ("read /proc/PID/stat: no such
// process" as a continued script died of its pending SIGTERM).
func WaitState(tb testing.TB, pid int, state byte) {
	tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, b, err := stateOf(pid)
		if err != nil && state == 0 && errors.Is(err, errGone) {
			return // gone: continued, and ended
		}
		if err != nil {
			tb.Fatalf("process %d never reached state %q: %v", pid, state, err)
		}
		if got != 0 && (got == state || state == 0 && got != 'T' && got != 't') {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("process %d never reached state %q: %s", pid, state, b)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// FailIfStopped watches the processes pids (the first a command, the
// others its own, such as its interpreter) until the command ends (a
// zombie, or gone) or tb's test does: one that stops ('T', 't') fails tb
// at once, and kill is called, so a test waiting for the command's end
// (its output's, its exit) is told now, not at its own time limit. For a
// command that must not stop: one that caught a signal it was to ignore
// (SIGTSTP) stops for good. It polls the states as WaitState does; the
// watch is waited for as tb's test ends.
func FailIfStopped(tb testing.TB, kill func(), pids ...int) {
	tb.Helper()
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			for i, pid := range pids {
				state, stat, err := stateOf(pid)
				switch {
				case state == 'T' || state == 't':
					tb.Errorf("process %d stopped: %s", pid, strings.TrimSpace(string(stat)))
					kill()
					return
				case i == 0 && (err != nil || state == 0 || state == 'Z' || state == 'X'):
					return // the command ended
				}
			}
			select {
			case <-done:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	tb.Cleanup(func() { close(done); wg.Wait() })
}

// stateOf is process pid's state ('R', 'S', 'T', 'Z', ...), 0 when its
// stat line (also returned) shows none, and readStat's error.
func stateOf(pid int) (byte, []byte, error) {
	b, err := readStat(pid)
	if err != nil {
		return 0, nil, err
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i > 0 && len(s) > i+2 {
		return s[i+2], b, nil
	}
	return 0, b, nil
}

// errGone is wrapped by readStat's error for a process that is gone.
var errGone = errors.New("the process is gone")

// openStat opens a process's stat file (a variable for a test).
var openStat = func(pid int) (*os.File, error) { return os.Open(fmt.Sprintf("/proc/%d/stat", pid)) }

// readStat reads /proc/PID/stat; its error wraps errGone when the process
// has ended and was reaped, before the open or between it and the read.
func readStat(pid int) ([]byte, error) {
	f, err := openStat(pid)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ESRCH) {
			err = fmt.Errorf("%w: %w", errGone, err)
		}
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if errors.Is(err, syscall.ESRCH) {
		err = fmt.Errorf("%w: %w", errGone, err)
	}
	return b, err
}
