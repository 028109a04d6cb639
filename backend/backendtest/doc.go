// Package backendtest is the conformance suite of package backend: one
// table of cases that every backend's tests run against real interpreters
// (the runner in package host, the sh shell, a gateway kernel), so the
// contract written in package backend is checked, not only stated.
//
// A backend's test calls [Run] with a [Backend]: how to start a fresh
// executor, and the [Lang] its cells are written in ([Python] or [Shell]).
// Cases that leave the interpreter usable share one executor; cases that end
// it (a kill after an ignored interrupt, a death, Close) start their own.
// The suite never sleeps to let something happen: a case that acts during a
// cell waits for the line the cell prints first. Nor does it bound how long
// something takes, which load stretches: the grace before a kill is checked
// from below, and a hang meets a minute's bound or the watchdog.
//
// Run must be called from a test that does not run in parallel with
// others when Backend.Clean checks leaks (leak checks are per process).
package backendtest
