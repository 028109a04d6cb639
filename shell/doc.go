// Package shell is the backend of `sh` cells: one persistent, interactive
// bash under a pseudo-terminal, started under its own reaper
// (internal/reaper) in its own session. A [Shell] keeps the contract of
// package backend, so sessions treat it as they treat the runner: cd,
// exported variables and functions persist between cells; programs see a
// terminal on stdout and stderr (merged into stdout frames); a cell's stdin
// is /dev/null, so reading it never hangs.
//
// [Start] returns once bash echoed its ready marker, or a
// *backend.StartError with the output tail (wrapping
// backend.ErrNoInterpreter when bash is not found, backend.ErrStartTimeout
// when it is not ready in time). A request whose Env names a variable bash
// cannot hold fails with [ErrEnvName].
//
// Cancelling a cell, or Interrupt while it runs, sends SIGINT to the
// terminal's foreground process group, and again to processes that
// appeared (or exec'd) since, so an interrupt that lands while bash forks
// is not lost; a cancelled cell still running after Options.Grace is
// killed with the shell (backend.ErrKilled). Interrupt with no cell
// running does nothing.
//
// A SIGINT that reaches bash while it reads a cell's line can take the
// whole line; bash then comes back to its prompt without running a line,
// and prints a prompt marker. The line is then typed again, guarded so
// that a copy runs nothing when the line was not lost after all; a cell
// already interrupted gets a line that skips it instead, and ends as
// interrupted (exit status 130) without having run.
//
// An interrupt that reaches bash back at its prompt (the cell had just
// ended) makes bash print a newline there. The next cell's line then
// prints a start marker, and what came before it is dropped when it is
// only such newlines (and ^C), so it does not open that cell's output.
// Anything else before the start marker (a background job's output) is kept. Close
// and Kill end every process of bash's session and return once bash is
// reaped and the reader has ended.
package shell
