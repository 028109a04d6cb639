// Package faults proves, end to end through the sessions registry (the Go
// API every front end uses), that evalhost survives what interpreters and
// their hosts do wrong: deaths mid-cell (SIGKILL, os._exit, a segfault),
// interrupts that are ignored, grandchildren that keep the interpreter's
// pipes open, output floods, huge lines, invalid UTF-8, interpreters that
// never become ready or cannot run at all, a host (a registry host,
// `evalhost serve`, `evalhost run`) that is SIGKILLed, and an artifacts
// directory that cannot be written. docs/faults.md lists each case and what
// it guarantees.
//
// Contract of every test here: the request ends (no hang) with one truthful
// result, output produced before the fault is kept, and afterwards no
// interpreter process, goroutine or file descriptor of this process is left
// behind; nor is any process a cell started, wherever it was re-parented,
// once its host died (found by its working directory). Nothing is timed
// from above, which load stretches: a test awaits the event and checks a
// grace or a timeout from below, and what it awaits would run far longer by
// itself, so a hang meets hangBound or the watchdog. Two
// soak tests behind -soak run thousands of cells with random faults across
// 8 sessions and check the same invariants at scale, and SIGKILL a busy
// host at random points again and again.
package faults
