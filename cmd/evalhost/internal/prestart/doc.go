// Package prestart starts, while the rest of evalhost is still being
// initialised, the reaper a one-shot `evalhost run` is about to need
// (launch.Begin, which reaper.Start then uses): its init is the point of
// it. Go initialises next the first package, in import-path order, whose
// imports all are; this one imports only os and internal/reaper/launch,
// whose imports are package reap's few, so its init runs right after
// reap's, before the standard library's reflect and everything that waits
// for it (the MCP SDK, the YAML parser, the runner's files and the rest),
// and the reaper's own start overlaps with all of those inits
// (tests.TestPrestartInitComesEarly). Importing package reaper here made
// it wait behind them: the spare started ~0.5 ms later (median, a 2-core
// VM). cmd/evalhost imports it for that effect alone; run calls
// reaper.Prestart again (a no-op when this one did) and ends an unused
// spare with reaper.DropSpare.
//
// Guessing wrong costs little: a spare nobody uses is one sleeping process
// until DropSpare or evalhost's exit; a run that did not get one starts
// its reaper on demand.
package prestart
