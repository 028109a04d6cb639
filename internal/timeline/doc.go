// Package timeline writes the phases of one evalhost command (resolve,
// spawn, ready, first output, end) with the time since the process
// started, so a slow start can be explained: EVALHOST_DEBUG=1.
//
// Contract: nothing is written until [Enable] names a writer (cmd/evalhost
// does so when EVALHOST_DEBUG is on); until then [Mark] is a no-op that
// costs one atomic load, so libraries may call it on hot paths. Marks are
// safe from any goroutine; each is one line, written whole. The timeline
// is process-wide on purpose: it describes this process's command.
package timeline
