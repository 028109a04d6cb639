// Package shell is the backend of `sh` cells: one persistent, interactive
// bash under a pseudo-terminal, started under its own reaper
// (internal/reaper) in its own session. A [Shell] keeps the contract of
// package backend, so sessions treat it as they treat the runner: cd,
// exported variables and functions persist between cells; programs see a
// terminal on stdout and stderr (merged into stdout frames); a cell's stdin
// is /dev/null, so reading it never hangs. Prompts a cell sets (PS1, as a
// venv's activate does, and PS0) are emptied as it ends: bash printed them
// into the next cell's output. A PROMPT_COMMAND a cell sets (direnv's hook)
// runs as each later cell ends, before it is reported, as a terminal runs
// it after each line: its output is that cell's, the cell's status stays,
// and a cell reads it with evalhost's own entry after a ';'.
//
// [Start] returns once bash echoed its ready marker, or a
// *backend.StartError with the output tail (wrapping
// backend.ErrNoInterpreter when bash is not found, backend.ErrStartTimeout
// when it is not ready in time). A request whose Env names a variable bash
// cannot hold fails with [ErrEnvName].
//
// Cancelling a cell sends SIGINT to the terminal's foreground process
// group, and again to processes that appeared (or exec'd) since, so an
// interrupt that lands while bash forks is not lost; a cell still running
// after Options.Grace is killed with the shell (backend.ErrKilled). An
// interrupt that reaches bash back at its prompt (the cell had just ended,
// or Interrupt between cells) makes bash print a newline there; the next
// cell then prints a sync marker before its code, and the empty lines that
// open what came before it (bash's, or a marker's start the interrupt cut)
// are dropped, up to one per interrupt sent, so they do not open that cell's
// output; from the first other text on, all of it (a background job's
// output) is kept, and passed on as it comes. SignalForeground sends a
// signal of the caller's (a terminal's Ctrl-\ passed on) to the terminal's
// foreground process group while a cell runs (ErrNotRunning otherwise):
// bash, interactive, ignores SIGQUIT; the cell's programs take it. Close and Kill end every process of bash's session and return once
// bash is reaped and the reader has ended.
//
// Each Shell writes its cells into a directory of its own,
// $TMPDIR/evalhost-sh-N (0700), which Close and Kill remove. While the
// Shell lives its process holds a lock on the directory (flock of the
// directory, through a descriptor no child inherits) and a mark in it says
// so; a killed evalhost's lock goes with it, so a directory whose lock can
// be had was left by one. [SweepCellDirs] removes those (the first Start
// of a process sweeps once: [SweepCellDirsOnce]): only a directory, never
// a link, named so, of the effective uid and mode 0700, marked, whose lock
// it gets; nothing where the temporary directory lets others rename its
// entries, or has no locks (there a directory is made unmarked, and left
// as an older evalhost's are).
package shell
