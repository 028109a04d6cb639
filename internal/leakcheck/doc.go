// Package leakcheck fails a test when something it started outlives it: a
// goroutine, an open file descriptor or a live descendant process.
//
// Check takes a baseline when called and compares against it after the
// test's later cleanups have closed what the test started, giving teardown
// up to 30 s to settle (a bound on a hang, not a timing: a loaded machine
// stretches teardown, and a clean one returns as soon as it is clean). No goroutine started since the baseline may be
// alive, file descriptors may not outnumber it (the runtime's poller,
// opened once for the process's life, is started before the first
// baseline), and no live descendant process may exist at all unless an
// option exempts it (one whose leader is a zombie lives while another of
// its threads runs); leftover processes are killed once reported, so one
// leak does not fail the tests after it.
// All of this is per process, so tests that use Check must not run in
// parallel with each other.
//
// Gone awaits the end of one process, every thread of it (a zombie leader
// whose other threads run on still holds its descriptors); InDir lists the
// processes working in a directory and GoneFromDir awaits their end, which
// finds what a test's cells started even after it was re-parented away
// from the test (an orphan of a killed host); Parent names a process's
// parent. Each judges a process as Gone does: one with a running thread
// has not ended, and its cwd and command line are read from that thread.
//
// Watchdog turns a hang into a panic that names the test and dumps every
// goroutine's stack, instead of waiting for go test's own timeout.
package leakcheck
