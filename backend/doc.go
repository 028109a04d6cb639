// Package backend is the contract every interpreter backend keeps: the
// runner process (package host), the persistent bash of `sh` cells and a
// Jupyter kernel (package gateway). Sessions, output sinks, serve and
// notebook execution are written once against [Executor]; the conformance
// suite in package backendtest holds each backend to this text.
//
// # Execute
//
// Execute runs req as one cell. It calls emit serially, from the calling
// goroutine, with the cell's frames (started first, then stdout, stderr,
// display, update_display, clear_output, result, error, input, warning) in
// the order the cell produced them, all before it returns, and returns the
// cell's done frame (Type done, Status "ok" or "error"). Every frame carries
// the request's id; an empty req.ID gets a generated one. emit must not
// call Close or Kill. req.Cwd and req.Env apply before the cell runs, and
// req.Argv and req.File when Argv is set: Python's sys.argv and __file__,
// and sys.path as python3 has it for that command line (an absolute
// File's directory, links resolved, first; the empty string, the cwd, for
// an Argv[0] of "-c" or "-"; the cwd's full path for "-m"; and neither
// the cwd entry req.Cwd put first nor the empty string the interpreter
// has before site-packages for notebooks; a later Argv gives back what an
// earlier one took and takes what it put; runner.ArgvSource is the rule),
// a shell's positional parameters, of any length. Their bytes are
// the OS's: invalid UTF-8 reaches Python as os.fsdecode gives it (a lone
// surrogate per byte), a shell unchanged. They last, as the cells
// leave them, until another request sets them: a request without Argv sees
// them as the cells before it left them. req.Filename and req.FirstLine
// name the file a Python cell comes from: the runner (host) compiles it
// under that name with the file's line numbers; the shell and gateway
// kernels ignore them. req.InScript (a script's cell: its request has
// argv) has the runner report the cell's uncaught error as python3 does,
// for that cell alone; the shell and gateway kernels ignore it (a gateway
// kernel's errors are IPython's, argv or not). A request with Exit set is
// not a cell and is refused with an error.
//
// A cell that fails (an exception, a non-zero exit status) is not an Execute
// error: the done frame says Status "error" and the interpreter stays alive
// with its state.
//
// # Cancellation
//
// When ctx ends during a cell, Execute interrupts it (SIGINT or the
// kernel's interrupt) and waits a grace window for it to end. A cell that
// ends within the grace returns its done frame with Cancelled set and a nil
// error; the interpreter and its state survive. A cell that does not is
// killed with its interpreter, and Execute returns an error wrapping
// [ErrKilled]; the executor is then no longer Alive. A ctx that ended
// before the call returns ctx's error without running the cell. Output the
// cell produced before either ending has been emitted. A cancellation whose
// cause is [ErrInterruptWait] waits for the cell until its time limit,
// which the caller gives as [WithTimeLimit] when it may move (else ctx's
// deadline), before that grace window. One whose cause holds
// [ErrInterruptAlone] interrupts the interpreter without its process
// group (the runner's; kill -INT of a python3's pid).
//
// # Errors
//
// Execute returns, wrapped so errors.Is finds them:
//
//   - [ErrBusy] when another Execute of the same executor is running. An
//     executor runs one cell at a time; callers serialise.
//   - [ErrClosed] when Close or Kill was called before (or during) the call,
//     or the interpreter had already ended.
//   - a [*DeathError] (matching [ErrDied]) when the interpreter ends during
//     the cell; the frames the cell produced first are still emitted.
//   - [ErrKilled] as above.
//
// After an error other than ErrBusy, or once Alive is false, the executor
// is finished: callers Close or Kill it and start a new one.
//
// A local backend that fails to start returns a [*StartError] with what the
// interpreter wrote to stderr; its message gives that a line at a time,
// indented and printed by trustdir.Shown, and its cause (which names the
// interpreter's path) by trustdir.Shown whole, so no line of either can
// pass for one of the message's (or for what follows it) and no escape
// sequence in them reaches a terminal.
//
// # Lifetime
//
// Ready returns the ready frame the backend started with. Done is closed
// and Alive turns false once the interpreter ended, whatever ended it.
// Interrupt while no cell runs does nothing to the next cell. Close ends the
// interpreter gently (within a grace, then by force), Kill at once; both
// return only when the interpreter is gone and every goroutine of the
// executor has ended, and both are safe to call twice and concurrently with
// Execute.
package backend
