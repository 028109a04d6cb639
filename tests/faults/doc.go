// Package faults proves, end to end through the sessions registry (the Go
// API every front end uses), that evalhost survives what interpreters and
// their hosts do wrong: deaths mid-cell (SIGKILL, os._exit, a segfault),
// interrupts that are ignored, grandchildren that keep the interpreter's
// pipes open, output floods, huge lines, invalid UTF-8, interpreters that
// never become ready or cannot run at all, a host that is SIGKILLed, and an
// artifacts directory that cannot be written.
//
// Contract of every test here: the request ends (no hang) with one truthful
// result, output produced before the fault is kept, and afterwards no
// interpreter process, goroutine or file descriptor of this process is left
// behind. A soak test behind -soak runs thousands of cells with random
// faults across 8 sessions and checks the same invariants at scale.
package faults
