// Package frames is the wire format between evalhost's host and the Python
// runner, and the one vocabulary every backend speaks: the runner, the `sh`
// shell and the Jupyter kernel gateway all produce the same [Frame] values,
// so sessions, output sinks, `serve`, `run` and notebook execution are written
// once.
//
// # Transport
//
// The host starts the runner with four file descriptors:
//
//	fd 0  requests, host → runner, NDJSON (one JSON object per line)
//	fd 1  the cell's raw stdout bytes, runner → host
//	fd 2  the cell's raw stderr bytes, runner → host
//	fd 3  frames, runner → host, NDJSON
//
// The runner's sys.stdout and sys.stderr write to fd 1 and fd 2 exactly as a
// subprocess, os.system or a C extension does, so everything the cell prints
// arrives in the order it was written to each descriptor, and nothing user
// code writes can corrupt the frame channel on fd 3. The host turns the raw
// bytes into [Stdout] and [Stderr] frames attributed to the running cell.
// The numbers are the host's side of it: at start-up the Python runner
// moves fd 0's and fd 3's pipes to higher descriptors of its own, and
// writes its marks to its own copies of fd 1's and fd 2's pipes, so a
// cell that closes or replaces descriptors it did not open (os.closerange,
// os.dup2) leaves them alone (runner/wire.py, take_fds).
//
// A host whose caller shows stdout and stderr on one destination may give
// the runner one pipe for both fd 1 and fd 2, and EVALHOST_MERGED=1: every
// byte then arrives in the kernel's order, all of it as stdout. Marks go
// on fd 1 alone, "unmarked" never names fd 2, and no stream sync frame is
// sent. The runner's streams flush as they do apart (runner/stdio.py), so
// its own writes keep the program's order (as python3 -u's) and raw writes
// the kernel's; nothing is kept back to be lost at a death.
//
// To know that a cell's output is complete, the runner ends every cell by
// flushing its streams, writing a sync mark to each of fd 1 and fd 2 that
// got bytes since its last mark, then the [Done] frame to fd 3. A sync mark
// is the bytes
//
//	"\x00\x1eEVH" + nonce + ":" + id + "\x1e\x00"
//
// where nonce is the value the host put in EVALHOST_SYNC_NONCE (random per
// process, so user output cannot forge a mark) and id is the request's id.
// The done frame names the descriptors that got no mark in "unmarked" (bit
// 1: fd 1, bit 2: fd 2; absent: both got one). The host delivers a cell's
// Done only after it has seen the mark on each marked descriptor, and has
// routed everything it read from the unmarked ones (below); bytes before a
// mark belong to that cell.
//
// A descriptor is unmarked when nothing the runner knows of wrote to it
// since its last mark (its sys.stdout/sys.stderr, os.write, a child process
// it started) and the pipe held no unread bytes (FIONREAD) when the frame
// was sent: so every byte written to it before the frame, by C code in the
// runner too, had left the pipe. The host's reader of that pipe is busy
// from before each read until what it read is routed, so the host routes
// what a busy reader holds, and what is queued, before the frame. A cell
// that writes no text thus costs no marks at all, unless it is the
// interpreter's last (the request's "last"): its done marks every
// descriptor, since the exit writes there next (an atexit handler's
// print), and text read before an unmarked done is taken for the cell's.
// A result that goes out in the same write as its done is placed right
// before done, under the same lock: a pipe found empty for the result is
// not asked again for done.
//
// # Order
//
// Text and rich frames travel on different pipes, so each display,
// update_display, clear_output, result, error, input and sync frame of a
// running cell (a positioned frame) carries "pos", its place among the
// cell's positioned frames from 1, and is paired with a position mark, the
// sync mark with the id "\x02" + pos (decimal). The runner writes the mark,
// after flushing its streams and with SIGINT blocked, right before the
// frame to each of fd 1 and fd 2 that got bytes since its last mark; the
// frame's "unmarked" names the others, and such a descriptor gets the mark
// before its next bytes instead. The host delivers a positioned frame once
// it has seen a mark numbered pos or later on each marked descriptor (and
// routed what it read from the unmarked ones), and holds text read after a
// mark numbered k until the k-th frame is out, so a cell's output keeps the
// order in which it was written. Raw writes to fd 1 and 2 (a child's, C
// code's) carry no marks between them: their order across the two pipes is
// the host's reading's (package host, "Order of stdout and stderr"). A frame the runner drops (over the line
// limit) gets no mark and no place. A runner that writes marks says so with
// "marks":true in its ready frame, so the host waits for them however much
// text is still in the pipes. A runner that writes none still works: the
// host then waits a few milliseconds for each such frame and delivers it
// after the text read so far; one that writes the bare mark "\x02" before
// every positioned frame, on both descriptors, and no "pos", gets its frames
// counted.
//
// Between stdout and stderr the same mechanism keeps the order: when the
// runner's sys.stdout and sys.stderr switch from one descriptor to the other,
// the runner sends a sync frame (a positioned frame) before the new bytes,
// so text written before the switch on either pipe is delivered before text
// written after it. Bytes that reach fd 1/2 without the runner's streams
// (os.write, subprocesses) keep their order within their pipe; bytes C code
// in the runner writes right after a positioned frame to a descriptor the
// frame left unmarked may be delivered before that frame (the runner cannot
// see them to mark them).
//
// A cell's started frame, and a result (nearly always followed at once by
// done), go out with the runner's next frame line, its next text, or its
// flusher's next tick (50 ms): a quick cell is one write to fd 3.
//
// # Lines
//
// Every line on fd 0 and fd 3 is one JSON object terminated by "\n". A line is
// at most [DefaultMaxLine] bytes unless both ends agree otherwise; the runner
// splits large text rather than write longer lines. A reader that meets a line
// that is not valid JSON, has no known "type", lacks a required field or is
// too long reports a [*ProtocolError] quoting a prefix of the line and reads
// on; one bad line never ends the stream.
//
// # Host → runner
//
//	{"type":"execute","id":ID,"code":CODE,"cwd":DIR?,"env":{NAME:VALUE}?,"argv":[ARG...]?,"file":PATH?,"filename":PATH?,"line":N?,"module":NAME?,"script":true?,"inScript":true?,"last":true?,"exitReports":true?,"terminal":{"fds":[FD...],"env":{NAME:VALUE}?,"request":ID?}?,"run":RUN?}
//	    Run CODE as one cell. "type" may be omitted (execute is the default).
//	    cwd: os.chdir to it and put it first on sys.path before the cell.
//	    env: set (a null value unsets) these os.environ entries before the cell.
//	    AppendRequest writes them as argv (below): a byte that is not UTF-8
//	    a lone surrogate, which os.environ encodes back to that byte.
//	    argv: sys.argv before the cell (non-empty; a runner starts with [""],
//	    as the interactive interpreter does). With argv, file is __main__'s
//	    __file__ (the script the cells come from), and when it is absolute its
//	    directory (links resolved) goes first on sys.path, as python3 puts a
//	    script's, or '' when argv[0] is "-c" or "-", as python3 -c and -
//	    put it; argv without file removes a __file__ an earlier request set,
//	    and the directory its file put on sys.path. Without argv all stay as
//	    they are. AppendRequest writes argv and file with each byte of
//	    invalid UTF-8 as a lone surrogate (\udcff for 0xff), which json.loads
//	    keeps: what os.fsdecode makes of the bytes, as python3 gives them.
//	    filename: the file CODE comes from (a script's cell), and line the
//	    1-based line of CODE's first line in it (default 1): the cell is
//	    compiled under that name with its lines numbered as in the file, so
//	    tracebacks, warnings, SyntaxErrors and inspect name FILE:LINE and
//	    show the file's own lines (read by linecache), as python3 FILE.
//	    Without it the cell is "<cell N>", its source kept for linecache.
//	    module: run the module NAME as python3 -m NAME does instead of CODE
//	    (runpy._run_module_as_main(NAME), which sets sys.argv[0] to its
//	    file and runs it, or a package's __main__, in __main__'s namespace);
//	    with argv ["-m", ARG...] the cwd's full path goes first on
//	    sys.path, as python3 -m puts it. Its traceback starts at runpy's
//	    frames, as python3's does; a module not found is SystemExit
//	    "EXECUTABLE: No module named NAME".
//	    script: run CODE as python3 runs a script file, not as a notebook
//	    cell: compiled whole in "exec" mode, so no expression statement's
//	    value is shown (no result frame, sys.displayhook not called, a
//	    leading docstring is __doc__), and matplotlib figures left open are
//	    not sent at its end; plt.show() (under Agg, the runner's default
//	    backend) and display() still send display frames.
//	    inScript: the cell is one of a script's (its request gave argv,
//	    which only its first cell in an interpreter carries): its uncaught
//	    error is reported as python3's (see error). A request with argv is
//	    one too. It lasts for this cell alone: a later request without
//	    either is a notebook's, whatever came before in the interpreter.
//	    A script's cell writes sys.stdout and sys.stderr with python3's
//	    codecs for the interpreter's environment (a lone surrogate is
//	    python3's UnicodeEncodeError under a UTF-8 locale); a notebook's
//	    with UTF-8 and backslashreplace, losing no text (runner doc).
//	    last: the exit request follows this cell at once (the interpreter's
//	    last cell). A script's (inScript or argv) then gives no warning of
//	    text its sys.stdout or sys.stderr could not write (see warning):
//	    the exit reports it as python3's does (see exit).
//	    exitReports: the interpreter's exit follows the request's cells
//	    and the caller shows their output as python3 would (a batch run
//	    per call: evalhost run), so a script's cell that is not last gives
//	    no such warning either: the exit reports what is still lost then,
//	    once, as python3's; without it (serve, MCP, a session) each cell
//	    whose text was lost warns. A cell of its that ends the script
//	    by sys.exit(text) writes the message as a last cell does (see
//	    error).
//	    terminal: the caller shows this cell's output on a terminal (run
//	    --session in one), as EVALHOST_TTY says for a whole interpreter:
//	    for this cell alone, sys.stdout and sys.stderr (of fds, 1 and 2)
//	    say isatty() true, stdout is line-buffered (unless it writes
//	    through), 3.13+'s _colorize takes their pipes for a terminal and a
//	    script's error is coloured as there (see error); env is set (a
//	    null value unsets) as the cell starts, after "env". As the cell
//	    ends all of it is taken back: the streams as they were, and each
//	    variable the cell left as terminal set it back to its value
//	    before (one the cell changed stays as the cell left it). The
//	    cells whose terminal has the same request id are one script (the
//	    caller's request): a variable one of them changed is not set for
//	    the later ones, which see the change.
//	    run: an opaque run id exposed to the tool bridge helper for this cell.
//	{"type":"exit"}
//	    Leave: the runner returns from its loop and exits 0. After a last
//	    cell of a script's, it flushes sys.stdout and sys.stderr as
//	    python3's exit does: one that cannot be written (the script closed
//	    fd 1) makes it exit 120, stdout's error reported through
//	    sys.unraisablehook ("Exception ignored in: <stdout's repr>"),
//	    stderr's silently. What it writes
//	    on fd 1 and 2 as it exits (atexit handlers, finalizers, threads) goes
//	    on under the last cell's position marks and sync frames (ids of that
//	    cell, positions after its last), so a host that counts it as that
//	    cell's output keeps the two streams in order.
//
// # Runner → host (fd 3), and what every backend emits
//
//	{"type":"ready","runner":VERSION,"python":VERSION,"pid":PID,"executable":PATH,"marks":BOOL?,"wake":SIGNAL?}
//	    Once, when the runner can take requests. The host waits for it within a
//	    start timeout; the sh backend and the gateway synthesise it. marks:
//	    the runner writes position marks (see Order). wake: a signal number
//	    whose handler does nothing (see interrupted).
//	{"type":"started","id":ID}
//	    The cell with this id began executing.
//	{"type":"stdout","id":ID,"data":TEXT}
//	{"type":"stderr","id":ID,"data":TEXT}
//	    Text the cell wrote (host-synthesised from fd 1/2 for the runner).
//	{"type":"display","id":ID,"bundle":{MIME:VALUE},"metadata":{…}?,"displayId":DID?}
//	    A rich display (display(), matplotlib figures, IPython display objects).
//	    VALUE is a JSON string for text and base64 images, any JSON value for
//	    JSON MIME types and in a bundle the cell sent as given
//	    (display(bundle, raw=True)). "text/plain" is always present (empty
//	    when such a bundle had none: a renderer passes an empty one over for
//	    the bundle's HTML, [Bundle.DisplayMIME]).
//	{"type":"update_display","id":ID,"bundle":{…},"metadata":{…}?,"displayId":DID}
//	    Replace every earlier display carrying DID, in this or an earlier cell.
//	{"type":"clear_output","id":ID,"wait":BOOL}
//	    Clear the cell's output; with wait, at the next output instead of now.
//	{"type":"result","id":ID,"bundle":{…},"metadata":{…}?,"executionCount":N}
//	    The value of the cell's last expression, when it is not None.
//	{"type":"error","id":ID,"ename":NAME,"evalue":TEXT,"traceback":[LINE…],"exit":true?,"reported":true?,"keyboardInterrupt":true?}
//	    The cell raised. Traceback lines are plain text, without runner frames.
//	    exit: it is the cell's SystemExit (a subclass's too) other than 0,
//	    which python3 would end a script by without a traceback (see done).
//	    Every error has this frame. In the runner's own mode, in a cell
//	    of a script's (the request has argv or inScript: evalhost run's
//	    cells always do), its uncaught error other than SystemExit and the
//	    host's interrupt is reported as python3 reports one that ends a
//	    script: the traceback keeps sys.tracebacklimit's innermost frames
//	    (none, nor the "Traceback" line, for 0 or less); a sys.excepthook
//	    the cells set is called, and what it prints, or "Error in
//	    sys.excepthook:" and both tracebacks when it raises, is the cell's
//	    output (a SystemExit it raises is the cell's, ending the script
//	    in its place); with the default hook, the traceback is written to
//	    a sys.stderr the cells replaced (a file). On 3.13+, where the
//	    host shows fd 2 on a terminal (EVALHOST_TTY: evalhost run in one;
//	    a request's terminal: run --session in one),
//	    a script's error, the host's interrupt and a compile error
//	    included, is written to stderr in python3's colours when its
//	    _colorize says so (NO_COLOR, PYTHON_COLORS, FORCE_COLOR, TERM), as
//	    python3 writes it there; the frame's traceback stays plain.
//	    reported: one of those, so the output already holds python3's
//	    report, and a renderer that shows output as python3 does shows no
//	    traceback of its own.
//	    A script's SystemExit with an exitMessage, in a cell its
//	    interpreter's exit follows (execute's last, or any cell of an
//	    exitReports request, whose batch stops at it; one an interrupt
//	    of the host's led to as well, except KeyboardInterrupt:
//	    sys.exit(...)), is reported too: the runner wrote the message and
//	    a newline to sys.stderr as the cells left it (fd 2 when that is
//	    None; a str() or a write that failed leaves the newline alone,
//	    and 3.12+ report that error through sys.unraisablehook, as
//	    python3's exit does) before the exit, where python3 prints it,
//	    ahead of the atexit handlers' output; a renderer does not print
//	    done's exitMessage again. A script's SystemExit has the str() of
//	    its code, taken once, for evalue and its traceback's last line:
//	    python3 never calls the exception's own __str__ (a subclass's).
//	    One of an int past 64 bits (status -1) is followed there by the
//	    OverflowError 3.12+ report through sys.unraisablehook.
//	    Other cells (neither: notebooks, serve and MCP cells without argv,
//	    in a session an earlier script's request used too) report as
//	    Jupyter's kernel does, every frame, no hook.
//	    keyboardInterrupt: the error is one python3 dies of by SIGINT
//	    when it ends a script: the builtin KeyboardInterrupt itself
//	    (type(e) is KeyboardInterrupt), and on 3.14+ any subclass of it
//	    too; before 3.14 a subclass, and on every version a class of the
//	    same name, end one with status 1, so ename cannot tell. Read by
//	    the registry (Frame.KeyboardInterrupt); encoders leave it out.
//	{"type":"input","id":ID,"prompt":TEXT}
//	    The cell called input(); stdin is not interactive, so the runner raises
//	    in the cell at once and the cell fails. Informational for renderers.
//	{"type":"warning","id":ID?,"message":TEXT}
//	    A non-fatal problem outside the cell (an extension module that raised;
//	    text the cell's sys.stdout or sys.stderr could not write, as the cell
//	    closed fd 1, unless the cell is a script's last: see execute's last).
//	{"type":"done","id":ID,"status":"ok"|"error","executionCount":N,"cancelled":BOOL,"exit":true?,"exitStatus":N?,"exitMessage":TEXT?,"unmarked":FDS?}
//	    The cell finished. cancelled is true when it ended by KeyboardInterrupt
//	    caused by an interrupt from the host. exit: it ended by SystemExit
//	    (sys.exit(), exit()); status ok for SystemExit(0) or (None) (or an
//	    int python3's cast to a C int makes 0, 2**32), else
//	    error after an error frame, with exitStatus, the status python3
//	    would exit with (not 0), and for a code that is not an int
//	    exitMessage, what python3 would print on stderr (the runner's own
//	    mode; IPython's reports SystemExit as any error). unmarked: see
//	    Transport.
//	{"type":"sync","id":ID,"pos":N}
//	    Runner → host only: the cell's writes switched between fd 1 and fd 2
//	    here (see Order). The host consumes it; no backend emits it.
//	{"type":"interrupted","id":ID}
//	    Runner → host only (since 1.1): the runner's SIGINT handler took an
//	    interrupt and is raising KeyboardInterrupt in the cell. CPython runs
//	    a signal's handler between bytecodes in the main thread, so a SIGINT
//	    that lands just before a blocking call (time.sleep, a read), or in
//	    another thread, waits until that call returns. Until this frame or
//	    the cell's done arrives, the host therefore sends ready's wake signal
//	    to the runner's main thread (tgkill) after 50 ms, then at doubling
//	    intervals: it ends the blocking call, and CPython then runs the
//	    pending SIGINT handler. The wake's own handler does nothing, so it
//	    never interrupts a cell twice, nor the cell's children, nor a SIGINT
//	    handler of the cell's own. The host consumes this frame.
//
// The runner adds "pos" and "unmarked" to positioned frames (see Order);
// the host consumes them and the frames it hands on carry neither.
//
// Unknown fields are ignored by readers, so either end may add fields without
// a version bump; a new frame type is a minor version bump of [Version].
//
// # Bundles
//
// A [Bundle] keeps each value as the raw JSON it came as. [Bundle.Text]
// decodes a string value, [Bundle.SetText] stores one encoded as
// json.Marshal encodes it. For a value of hundreds of megabytes (a large
// display) [Bundle.Pieces] decodes it a piece at a time, and [TextValue]
// encodes a text written in pieces: the same bytes as Text and SetText,
// without holding the whole text beside its JSON. [TextPieces.MaxValueLen]
// bounds that JSON, so that it can be made in one buffer.
package frames
