// Package handoff is the reading loop serve and mcp's stdio fast path share:
// the goroutine that reads a request line runs its work itself, so a warm
// request reaches its interpreter without a hand-off between goroutines
// (each a thread wake-up), and first hands the reading on, to a goroutine
// parked after earlier work or to a new one, so that what follows (a
// cancel, another session's request) is still read at once.
//
// A [Relay] is built with next, which reads and dispatches lines until one
// leaves work to run, returning that work after counting it in wg (the
// caller's Add), or nil once reading ends; at most one goroutine is inside
// next at a time, which gives next the only right to the input. Read runs
// the loop: start it with `go r.Read()` once. A goroutine in Read is
// counted in wg from next's Add until it reads again or exits; a reader
// blocked in next is not (only the input's end ends it). After done is
// closed, a goroutine that finishes its work exits instead of parking.
// It is wrong to call Read more than once per Relay, or to close done
// before no more work can be dispatched.
package handoff
