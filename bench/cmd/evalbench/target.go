package main

import "time"

// event is one frame of a cell as a benchmark sees it.
type event struct {
	typ  string // frame type: ready, started, stdout, stderr, result, …
	data string
	pid  int // of a ready frame
	at   time.Time
}

// target is evalhost reached one way (Go API, serve): the measurements are
// written once against it.
type target interface {
	// run evaluates one py cell in session (mode "" or "per-call"); with
	// interrupt, it cancels the cell once it started. It returns the cell's
	// status.
	run(session, mode, code string, interrupt bool, on func(event)) (string, error)
	closeSession(session string)
	hostPID() int
}
