// Package host runs one interpreter process: runner.py under a Python
// executable, speaking the protocol in package frames.
//
// Start spawns the runner in its own session and process group, without a
// controlling terminal, under a reaper (internal/reaper), with four pipes
// (requests on fd 0, raw stdout on fd 1, raw stderr on fd 2, frames on fd 3;
// Options.Stdin on fd 4, which the runner makes the cells' fd 0; with
// Options.MergeStderr fd 2 is fd 1's pipe, read as stdout, so raw writes
// to both keep the kernel's order) and a fresh sync nonce, and returns
// once the runner is ready, or a *StartError with the child's stderr tail
// (merged, what it wrote outside cells); an interpreter that ended before
// the runner was ready is its *EarlyExitError, which says that a silent
// exit suggests no Python (/bin/true) (package shell starts bash the
// same way, under its own reaper). The reaper ends every process a cell started,
// double-forked and setsid ones included (on Linux), when the interpreter
// exits or this process dies by any signal; see docs/faults.md.
//
// Execute runs one cell at a time and hands its frames to the caller in
// arrival order from the calling goroutine. Raw bytes from fd 1 and 2 become
// stdout and stderr frames (never splitting a UTF-8 sequence); a cell's done
// frame is delivered only after its sync mark was seen on each pipe the
// runner marked, and what was read from the others is routed, so all of its
// output comes first. Display, result, error and input frames keep their
// place among the text through numbered position marks (position.go),
// which the runner writes to fd 1 and 2 around such frames; a cell that
// writes no text gets no marks (frames doc, "Order"). Bytes written
// while no cell runs go to the next cell (bounded), and stderr outside cells
// feeds the tail used in errors.
//
// # Order of stdout and stderr
//
// fd 1 and fd 2 are two pipes, and the runner's marks order only what it
// knows of: its own streams (a stream sync when they switch) and its
// frames. Raw writes (os.write, a child's echo, C code) carry no marks, so
// their order across the pipes is the host's to keep. On Linux one reader
// takes both pipes in the order they became readable (order_linux.go):
// of two writes made one after the other (the first returned before the
// second began: one thread's, or processes that take turns) to different
// pipes, the second is recorded after the first, a cell's
// os.write(1, b"a\n"); os.write(2, b"b\n") or os.system("echo a; echo b >&2")
// as written, however much the first wrote. Not kept: the order of writes
// made at once (threads, processes running side by side); a write to a
// stream that still held text the host had not read when it was made (a
// cell that outpaces the host: the text goes with what its stream held,
// ahead of the other stream's writes between them); and, rarely, a write
// made in the moment between the host's look at its pipe and the read
// that takes it (a system call's time): a later write to that pipe may
// then pass a write to the other made between the two. Merged
// (Options.MergeStderr) one pipe keeps the kernel's order. Elsewhere
// (macOS) each pipe has its own reader, and text of the two streams read
// at about the same time may come in either order.
//
// ExecuteStreams hands stdout and stderr to the caller as bytes lent from
// the readers' buffers instead of as frames, so bulk output moves without
// a copy or an allocation per read; see chunks.go for who may read a lent
// buffer and until when.
//
// ExitAfterNextCell makes the next cell the interpreter's last: the exit
// request is written right behind it, so the runner leaves as soon as the
// cell ends (a one-shot run's last cell), not after another round trip;
// the cell's request says so (frames.Request.Last), so a script's leaves
// what its streams could not write to the exit, as python3's.
// What the interpreter writes as it exits (atexit handlers, finalizers,
// threads) is then that cell's output, in order after its own, and Execute
// returns once the output streams end: the exit is part of the cell, bounded
// by its context and then Options.Grace (exitout.go); an exit with a
// non-zero status or a signal the host did not send makes the cell an error
// named InterpreterExit (an exit's with frames.Frame.Exit and ExitStatus,
// python3's status, as a SystemExit's; a signal's with frames.Frame.Signal,
// which python3 dies of). Output written while
// no cell runs otherwise goes to the next cell, and at exit to no one.
//
// Cancellation interrupts (SIGINT to the group, or to the interpreter
// alone when the cause holds backend.ErrInterruptAlone, then wake-ups of
// the runner until it says the SIGINT landed), waits a grace window for done,
// then terminates and kills the group (backend.ErrKilled); a context
// cancelled with backend.ErrInterruptWait as its cause gets its grace
// window only after its time limit (backend.TimeLimit's, which the caller
// may move later, else its deadline): the cell's handling of the
// KeyboardInterrupt takes its time, as under python3's Ctrl-C, within the
// cell's timeout (or until the caller's Kill); done.Interrupted says the
// interrupt was raised in the cell. Signal sends
// a signal of the caller's to the interpreter's main thread while a cell
// runs, ErrNotRunning otherwise (a script's SIGTERM handler runs at once),
// SignalGroup to its process group (job
// control: SIGSTOP, SIGCONT; the time between them is not counted by the
// waits for a cell's late end marks, the grace window and SIGTERM after an
// interrupt, or an exit, stopclock.go; Close's are wall time, and Close
// and the ladder's SIGTERM continue a stopped interpreter, as a shell's
// kill of a stopped job does), SignalForeground to its group while a cell
// runs (a terminal's Ctrl-\ passed on), ErrNotRunning otherwise; the
// death they may cause is a DeathError
// whose Signum says which. Death during a
// cell is noticed when the process is reaped and reported as a
// *backend.DeathError; Death tells how an interpreter found dead between
// cells ended (nil when Close or Kill ended it); an Execute that finds the
// interpreter's output ended waits up to Grace for it to be reaped before
// it fails with ErrClosed, so Death knows. Close and Kill return
// only when the child and everything it started are gone and every
// goroutine of the Process has ended.
//
// A cell's frames pass from the goroutine that reads them to the one that
// orders them with the cell's text and on to the caller of Execute: with a
// second P idle, each hand-off may wake a thread that finds nothing to do.
// A program that drives a Process on a machine of few cores may gain from
// running on one P (GOMAXPROCS=1), as serve does: measured on 2 cores, a
// warm `1+1` cost the host 36-49 µs of CPU on one P against 57-73 on two.
package host
