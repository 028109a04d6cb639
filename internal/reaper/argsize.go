package reaper

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
)

// TooLargeError is a child that was not started because its arguments and
// environment are more than the system lets a program start with
// (execve's E2BIG, which it wraps): one string beyond the most one may
// hold, or all of them beyond what this process may pass. Only names and
// sizes are said, never a value (a variable may hold a secret).
type TooLargeError struct {
	Largest     string // the largest string: "variable NAME" or "argument N"
	Size        int    // its bytes
	StringLimit int    // the most bytes one string may hold; 0 when the system has no such limit or it is unknown
	Total       int    // bytes of them all, as execve counts them
	Limit       int    // the most this process may start a program with; 0 when unknown
	Pid         int    // this process
}

func (e *TooLargeError) Error() string {
	if e.StringLimit > 0 && e.Size > e.StringLimit {
		what := "environment"
		if strings.HasPrefix(e.Largest, "argument") {
			what = "command line"
		}
		return fmt.Sprintf("the %s is too large to start a program with: %s is %d bytes, and one may hold at most %d; "+
			"unset it or make it smaller (a large value is better passed in a file)", what, e.Largest, e.Size, e.StringLimit)
	}
	limit := "more than the system let it start a program with"
	if e.Limit > 0 {
		limit = fmt.Sprintf("more than the %d bytes process %d may start a program with (a quarter of its stack limit, ulimit -s, at most 6 MiB)", e.Limit, e.Pid)
	}
	return fmt.Sprintf("the environment and command line are too large to start a program with: %d bytes in all (the largest: %s, %d bytes), %s; "+
		"unset or shorten variables (large values are better passed in files), or raise the stack limit where evalhost starts", e.Total, e.Largest, e.Size, limit)
}

func (e *TooLargeError) Unwrap() error { return syscall.E2BIG }

// reaperExtra is what a reaper of its own adds to a child's strings as it
// is executed (its path, name and configuration), so a Spec is refused
// alike whether a spare or a new reaper starts it.
const reaperExtra = len("/proc/self/exe\x00evalhost-reaper\x00GOMAXPROCS=1\x00") + 64

// checkSize refuses a Spec whose strings execve would refuse with E2BIG,
// before any is started: a spare reaper's own execve would only say
// "argument list too long" in a line of its report.
func checkSize(s Spec, env []string) error {
	e := measure(s, env)
	if e.StringLimit > 0 && e.Size > e.StringLimit || e.Total > minArgLimit && e.Total > argLimit() {
		e.Limit = argLimit()
		return e
	}
	return nil
}

// sizeError is checkSize's error for an execve that failed with E2BIG all
// the same (a limit this platform does not say).
func sizeError(s Spec, env []string) *TooLargeError {
	e := measure(s, env)
	e.Limit = argLimit()
	if e.Total <= e.Limit {
		e.Limit = 0
	}
	return e
}

func measure(s Spec, env []string) *TooLargeError {
	e := &TooLargeError{StringLimit: maxStringBytes, Pid: syscall.Getpid(), Total: len(s.Path) + 1 + reaperExtra}
	n := 0
	note := func(str string, what func() string) {
		n++
		e.Total += len(str) + 1
		if len(str) > e.Size || e.Largest == "" {
			e.Size, e.Largest = len(str), what()
		}
	}
	for i, a := range s.Args {
		note(a, func() string { return "argument " + strconv.Itoa(i) })
	}
	for _, kv := range env {
		note(kv, func() string {
			name, _, _ := strings.Cut(kv, "=")
			if strconv.CanBackquote(name) {
				return "variable " + name
			}
			return "variable " + strconv.Quote(name)
		})
	}
	e.Total += (n + 4) * strconv.IntSize / 8 // a pointer to each, a reaper's few more
	return e
}
