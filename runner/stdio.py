"""evalhost stdio: what a cell gets instead of a terminal. stdout and stderr
are the runner's streams on fd 1/2 (stderr flushes stdout first, so the two
interleave as written; isatty() true, and stdout line-buffered, when the
host shows them on a terminal, EVALHOST_TTY), flushed every FLUSH_INTERVAL
while a cell runs and before any other writer of fd 1/2 (os.write, os.system, exec, posix_spawn,
fork, subprocess). When fd 2 is fd 1's pipe (EVALHOST_MERGED: the host
shows both on one destination, as `2>&1` or a terminal) the same flushes
keep the program's order on that one pipe (see merged below). input() and
getpass fail at once with StdinNotImplementedError (after an input frame)
instead of hanging, and sys.stdin, python's own on fd 0 (/dev/null), reads
empty, as ipykernel's (a kernel's stdin at its end) does, unless the host
gave a script's stdin (evalhost run's piped input), which they then read
as python3's do, or withheld one it has (run's terminal, what is piped
into run --session: EVALHOST_STDIN_WITHHELD), when sys.stdin refuses as
input() does, saying why (Withheld). Its
StdlibHook adapts the few stdlib modules that need it as they are imported:
linecache learns the cells' sources, pdb (bdb) neither shows nor steps
into the runner's frames, 3.13+'s _colorize takes the pipes the host shows
on a terminal for one (python3 colours its error reports there), and what
showing a warning imports is found as the runner's own imports are. Loaded
by core as it loads; it
imports nothing more.
"""

import _thread
import io
import os
import sys

_core = globals()["_core"]
_wire = _core._wire
_q = _core._q
_touch, _touch_both, _send_held = _wire._touch, _wire._touch_both, _wire._send_held
_os_write = os.write

FLUSH_INTERVAL = 0.05

given = False  # fd 0 is a script's stdin (core._take_fds): input() and sys.stdin read it
withheld = ""  # why the host's stdin is not the cells' (its terminal...): sys.stdin refuses (Withheld)
# fd 2 is fd 1's pipe (EVALHOST_MERGED; take): the kernel orders what the
# cells, their children and C code write to either. The streams buffer and
# flush as always (the timed flush, stdout before stderr and before other
# writers), so Python's own writes keep the program's order, as python3 -u
# shows it, and a death loses no more than it does apart; only the marks
# differ: fd 1 alone takes them (wire.merge), so no stream sync is sent.
merged = False
out = None  # the runner's sys.stdout and sys.stderr, once take() made them
err = None
# The pipes on fd 1/2 that the host shows on a terminal (EVALHOST_TTY; or a
# request's "terminal", for its cell alone: terminal.py), as
# (st_dev, st_ino): what 3.13+'s _colorize takes for a terminal
# (_fix_colorize). err_shown: fd 2's is one, where python3 colours the
# reports of errors it prints (tracebacks.py).
tty_pipes = frozenset()
err_shown = False
buffering_chosen = False  # a program's sys.stdout.reconfigure(line_buffering=...)
# (encoding, errors) of stdout and stderr. AGENT's are what a notebook's,
# serve's or MCP's cells write with: a cell's text is never lost to an
# encoding error. python_codecs are what python3 made its own streams with
# as this interpreter started (take: its locale, PYTHONIOENCODING, -X utf8,
# -E), which a script's cells write with (codecs_for); _set is what the
# runner last gave the streams, so a cell's own reconfigure is left alone.
AGENT = (("utf-8", "backslashreplace"), ("utf-8", "backslashreplace"))
python_codecs = AGENT
_set = AGENT
_fork_lock = _thread.allocate_lock()  # held across a fork: no flush runs in it
_stop = _thread.allocate_lock()  # held until the flusher must stop
_flusher_done = _thread.allocate_lock()


# --- stdout and stderr -----------------------------------------------------


class _Stderr(io.TextIOWrapper):
    """stderr that flushes stdout first, so the two interleave as written;
    not a closed stdout (sys.stdout.close()), which has nothing to flush
    and would fail every write to stderr. A stdout that cannot be written
    (the cell closed fd 1) fails no write to stderr either, as python3's
    stderr, which flushes nothing first, does not: the cell's end says
    what stdout lost (flush_said)."""

    def write(self, s):
        if not out.closed:
            try:
                out.flush()
            except OSError:
                pass
        return io.TextIOWrapper.write(self, s)


class _Stdout(io.TextIOWrapper):
    """stdout whose reconfigure notes a line buffering the program chose
    (buffering_chosen): a terminal's cell (terminal.py) leaves that as it
    is, so it lasts as in one python3 process. The runner's own calls are
    io.TextIOWrapper's."""

    def reconfigure(self, **kwargs):
        global buffering_chosen
        io.TextIOWrapper.reconfigure(self, **kwargs)
        if kwargs.get("line_buffering") is not None:
            buffering_chosen = True


# Their reprs, their types' and the C errors that name their type
# (tp_name, __name__) read as python3's, "<_io.TextIOWrapper
# name='<stderr>' ...>", "<class '_io.TextIOWrapper'>": a debugger
# stepping through logging's StreamHandler shows it.
for _cls in (_Stderr, _Stdout):
    _cls.__name__, _cls.__qualname__, _cls.__module__ = "_io.TextIOWrapper", "TextIOWrapper", "_io"
del _cls


def _is_terminal():
    return True


def _stream(fd, name, cls, terminal=False, unbuffered=False):
    raw = _wire._TrackedFileIO(fd, "w", closefd=False)
    # merged, fd 2's writes are fd 1's: one pipe, one mark, no stream syncs (wire.merge)
    raw._evh_fd = 1 if merged else fd
    raw.name = name
    if terminal:
        # What the host shows the cell's bytes on is a terminal (evalhost run
        # in one): say so, as python3's stream would, so libraries colour and
        # size their output as there. The fd stays a pipe (os.isatty(1)).
        raw.isatty = _is_terminal
    if unbuffered:  # python3 -u's: each write goes to the fd as it is made
        s = cls(raw, encoding="utf-8", errors="backslashreplace", newline="\n", write_through=True)
    else:
        s = cls(io.BufferedWriter(raw, 1 << 16), encoding="utf-8", errors="backslashreplace", newline="\n")
    s.mode = "w"
    return s


def _pipe_id(fd):
    try:
        st = os.fstat(fd)
    except (OSError, TypeError, ValueError):  # a bad fd; a fileno() that is not an int
        return None
    return st.st_dev, st.st_ino


class _TerminalOs:
    """3.13+'s _colorize's os: isatty is true of a pipe the host shows on
    a terminal too (tty_pipes), as python3's fd 1 or 2 there is one, so
    its can_colorize answers as python3's would, by its own rules
    (NO_COLOR, PYTHON_COLORS, FORCE_COLOR, TERM=dumb). Only the terminal's
    pipes: a fd a cell put a file on (os.dup2) is what it is."""

    def __init__(self, real):
        self._real = real

    def __getattr__(self, name):
        return getattr(self._real, name)

    def isatty(self, fd):
        return self._real.isatty(fd) or _pipe_id(fd) in tty_pipes


def _fix_colorize(mod):
    """python3's reports of errors it prints itself (a thread's exception,
    traceback._print_exception_bltin) colour on a terminal by what
    _colorize.can_colorize says (3.13+): it sees the terminal's pipes as
    one (_TerminalOs). Nothing changes where the host shows none."""
    if tty_pipes and getattr(mod, "os", None) is os:
        mod.os = _TerminalOs(os)


def _unbuffered():
    """Whether the interpreter's own stdout writes through: python3's -u,
    or PYTHONUNBUFFERED without -E/-I, as python3 decides it. The host
    passes that variable on only when asked (evalhost run's own, --env):
    the sessions' environment drops a host's, which may be set for its
    own python3, since unbuffered streams cost a write per print."""
    return bool(getattr(sys.stdout, "write_through", False))


def take():
    """The runner's sys.stdout/stderr on fd 1/2. sys.stdin stays python's
    own on fd 0, as python3 made it (encoding, errors, buffering): the
    script's stdin when one was given, else /dev/null, which reads empty
    as ipykernel's sys.stdin does; Withheld when the host withheld one."""
    global out, err, merged, tty_pipes, err_shown, python_codecs
    python_codecs = tuple(_codecs(s) or c for s, c in zip((sys.stdout, sys.stderr), AGENT))
    terminal = os.environ.pop("EVALHOST_TTY", "").split(",")
    if terminal != [""]:
        tty_pipes = frozenset(_pipe_id(fd) for fd in (1, 2) if str(fd) in terminal) - {None}
        err_shown = "2" in terminal
    if os.environ.pop("EVALHOST_MERGED", "") == "1":
        merged = True
        _wire.merge()
    unbuffered = _unbuffered()
    out = _stream(1, "<stdout>", _Stdout, "1" in terminal, unbuffered)
    err = _stream(2, "<stderr>", _Stderr, "2" in terminal, unbuffered)
    # As python3's: stderr line-buffered, and stdout too on a terminal,
    # unless -u made them write through.
    if not unbuffered:
        err.reconfigure(line_buffering=True)
        if "1" in terminal:
            io.TextIOWrapper.reconfigure(out, line_buffering=True)
    _wire._streams = (out, err)
    sys.stdout = sys.__stdout__ = out
    sys.stderr = sys.__stderr__ = err
    if withheld:
        sys.stdin = sys.__stdin__ = Withheld()


def _codecs(stream):
    """A text stream's (encoding, errors); None for one that has neither
    (python3 left sys.stdout None: fd 1 was closed as it started)."""
    enc, errors = getattr(stream, "encoding", None), getattr(stream, "errors", None)
    if type(enc) is not str or type(errors) is not str:
        return None
    return enc, errors


def codecs_for(script):
    """Give out and err a script's codecs (python_codecs: python3's, as
    evalhost run is python3) or, for any other cell, AGENT's, before the
    cell runs. They stay until a cell of the other kind, so what a
    script's exit and threads write after its last cell is encoded as
    python3's would be. A stream a cell reconfigured itself (not what the
    runner last set) keeps what the cell gave it, as a script's later
    lines keep it."""
    global _set
    want = python_codecs if script else AGENT
    if want == _set:
        return
    for stream, now, (enc, errors) in zip((out, err), _set, want):
        if _codecs(stream) != now:
            continue
        try:
            if now[0] == enc:
                stream.reconfigure(errors=errors)
            else:  # flushes first: what was written goes in its own codec
                stream.reconfigure(encoding=enc, errors=errors)
        except (OSError, ValueError, LookupError):  # closed, or its fd gone: stays as it is
            pass
    _set = want


def flush_std():
    """Flush every Python-level stream that may hold bytes for fd 1/2."""
    so, se = _std()
    for s in (out, err, so if so is not out else None, se if se is not err else None):
        if s is not None:
            try:
                s.flush()
            except Exception:
                pass


def _std():
    """sys.stdout and sys.stderr as they are now; None for one a cell
    deleted (del sys.stderr), which python3 passes over as it does None."""
    return getattr(sys, "stdout", None), getattr(sys, "stderr", None)


def flush_said(qid, last_of_script=False, exit_reports=False):
    """flush_std at a cell's end, saying (a warning frame) what the runner's
    stdout or stderr could not write, which would be lost in silence: the
    cell closed fd 1 or 2, say, where python3 would say "Exception ignored
    ... Bad file descriptor" as it exits. The text stays buffered, so each
    later cell whose text cannot go out says so too, and it comes out once
    the fd works again. A script's last cell says nothing: the exit that
    follows reports it as python3's does (exit_flush); nor does any cell
    of a script whose exit the host will show as python3's (exit_reports:
    evalhost run), which reports what is still lost then, once. A cell's own
    sys.stdout or sys.stderr goes first: it may write into the runner's.
    One flush of each: this runs at every cell's end."""
    global script_ended
    script_ended = last_of_script
    so, se = _std()
    for s in (so if so is not out else None, se if se is not err else None):
        if s is not None:
            try:
                s.flush()
            except Exception:
                pass
    for s, name, fd in ((out, "stdout", 1), (err, "stderr", 2)):
        try:
            s.flush()
        except BlockingIOError:
            pass  # a non-blocking fd 1 or 2 that was full: delayed, not lost
        except OSError as e:
            if last_of_script or exit_reports:
                continue
            _wire._warn(
                "what this cell wrote to sys.%s could not be written to fd %d (%s: %s) and is lost so far: "
                "did the code close or replace fd %d? os.dup2 a working descriptor onto it, or reset the session"
                % (name, fd, type(e).__name__, e, fd),
                qid,
            )
        except Exception:
            pass


# The interpreter's last cell was a script's (flush_said): its exit flushes
# as python3's does (exit_flush).
script_ended = False
# The last cell that raised ended by the builtin KeyboardInterrupt, uncaught
# (cells.fail): python3 then dies of SIGINT, not 120, whatever its flush
# did. Not per cell: a batch's skipped last cell exits as an empty one.
interrupt_ended = False


def dies_of_sigint(e):
    """Whether python3 dies of SIGINT when e ends a script uncaught: the
    builtin KeyboardInterrupt itself, and 3.14+ any subclass of it too
    (_Py_HandleSystemExitAndKeyboardInterrupt matches by isinstance)."""
    if sys.version_info >= (3, 14):
        return isinstance(e, KeyboardInterrupt)
    return type(e) is KeyboardInterrupt


def exit_flush():
    """After a script's last cell (script_ended), flush sys.stdout and
    sys.stderr as python3's exit does once its atexit handlers ran
    (flush_std_files); False when one failed, where python3 exits 120.
    One closed (its closed true), None or deleted is passed over; stdout's
    failure is reported through sys.unraisablehook ("Exception ignored
    in: <stdout's repr>", 3.13 "Exception ignored on flushing
    sys.stdout:", 3.14+ "while flushing", and the error, without a traceback: python3's flush is C
    code), stderr's is not. A notebook's cells said theirs
    at each cell's end (flush_said)."""
    ok = True
    if not script_ended:
        return ok
    so, se = _std()
    for s, report in ((so, True), (se, False)):
        try:
            if s is None or s.closed:
                continue
        except Exception:
            pass  # python3 takes a stream whose closed fails for open
        try:
            s.flush()
        except Exception as e:
            ok = False
            if report:
                _unraisable(e.with_traceback(None), s)
    return ok


def _unraisable(e, obj):
    """Report e as the interpreter's exit flush would, through
    sys.unraisablehook: PyErr_WriteUnraisable(obj) before 3.13, whose
    flush_std_files says "Exception ignored on flushing sys.stdout" instead
    (PyErr_FormatUnraisable, no object), 3.14+ "while flushing"."""
    if sys.version_info >= (3, 13):
        verb = "while" if sys.version_info >= (3, 14) else "on"
        u = unraisable_args(e, "Exception ignored %s flushing sys.stdout" % verb, None)
    else:
        u = unraisable_args(e, None, obj)
    hook = getattr(sys, "unraisablehook", None)  # None or deleted: the default, as there
    if u is not None:
        try:
            (sys.__unraisablehook__ if hook is None else hook)(u)
        except Exception:
            pass


def unraisable_args(e, err_msg, obj):
    """sys.UnraisableHookArgs for e, as Python's report of it makes them
    (e's traceback); None when none can be had. Python makes none but as
    it reports one, so the type is taken from a report of its own, caught."""
    got = []
    hook = getattr(sys, "unraisablehook", got)  # got: the script deleted it
    sys.unraisablehook = got.append
    try:
        _Unraisable()
    finally:
        if hook is got:
            del sys.unraisablehook
        else:
            sys.unraisablehook = hook
    return type(got[0])((type(e), e, e.__traceback__, err_msg, obj)) if got else None


class _Unraisable:
    def __del__(self):
        raise RuntimeError


def _flush_tick():
    """The flusher's flush: stdout whole; stderr's bytes, not its pending
    text. sys.stderr is line-buffered (as CPython's) and _Stderr.write is
    Python code, so a print to it can be interrupted between its pieces:
    flushing the pending text there split lines ("e" then " 1\n"). A
    partial stderr line goes out with its newline, a flush, or the cell's
    next frame or end."""
    for s in (out, err.buffer):
        try:
            s.flush()
        except Exception:
            pass


def _flusher():
    """Every FLUSH_INTERVAL while a cell runs, flush stdout/stderr and send
    a held frame (the cell's started, when it has sent nothing else yet).
    It ticks while idle too: waking it at each cell's start cost a thread
    switch (and a GIL hand-off) on every warm round trip."""
    try:
        while True:
            if _stop.acquire(True, FLUSH_INTERVAL):
                return
            with _fork_lock:
                if _wire._cur.running:
                    _flush_tick()
                    _send_held()
    finally:
        _flusher_done.release()


def start_flusher():
    _stop.acquire()
    _flusher_done.acquire()
    _core._start_thread(_flusher)


def stop():
    """Stop the flusher (waiting up to 1 s for a tick under way), then flush."""
    _stop.release()
    _flusher_done.acquire(True, 1.0)
    flush_std()


# --- flushing before other writers of fd 1/2 ------------------------------


def _flush_first(fn):
    def wrapper(*args, **kwargs):
        flush_std()
        _touch_both()
        return fn(*args, **kwargs)

    wrapper.__name__ = getattr(fn, "__name__", "wrapper")
    wrapper.__qualname__ = wrapper.__name__
    wrapper.__doc__ = getattr(fn, "__doc__", None)
    wrapper.__wrapped__ = fn
    return wrapper


def _write(fd, data):
    if fd == 1 or fd == 2:
        flush_std()
        _touch(fd)
    return _os_write(fd, data)


_write.__name__ = _write.__qualname__ = "write"
_write.__doc__ = os.write.__doc__


def _before_fork():
    _fork_lock.acquire()
    flush_std()
    _touch_both()


def _after_fork_parent():
    _fork_lock.release()


def _after_fork_child():
    _wire._forked = True
    _fork_lock.release()


def patch_writers():
    """os.write, system, exec, posix_spawn and _exit flush first, and so
    does a fork: os._exit(N) after a print keeps the print (python3 loses
    what its buffer held; output before a death is never dropped here)."""
    os.write = _write
    for name in ("system", "execv", "execve", "posix_spawn", "posix_spawnp", "_exit"):
        fn = getattr(os, name, None)
        if fn is not None:
            setattr(os, name, _flush_first(fn))
    # _posixsubprocess gets _patch_fork_exec as it is imported (StdlibHook):
    # loading the extension at start cost ~0.13 ms of every start.
    os.register_at_fork(
        before=_before_fork, after_in_parent=_after_fork_parent, after_in_child=_after_fork_child
    )


def _patch_fork_exec(ps):
    """subprocess's way to start a child (_posixsubprocess.fork_exec) flushes first."""
    if getattr(ps, "fork_exec", None) is None:
        return  # not the extension (a _posixsubprocess.py on sys.path)
    ps.fork_exec = _flush_first(ps.fork_exec)
    sub = sys.modules.get("subprocess")
    if sub is not None and getattr(sub, "_fork_exec", None) is not None:
        sub._fork_exec = ps.fork_exec


# --- stdin ------------------------------------------------------------------


class StdinNotImplementedError(NotImplementedError):
    """Raised when a cell asks for interactive input."""


StdinNotImplementedError.__module__ = "builtins"
_NO_STDIN = (
    "input() is not supported: evalhost cells have no interactive stdin; "
    "pass values in code or files instead"
)


_WITHHELD = "%s is not given to the script: %s"  # the host's reason (host.Options.StdinWithheld)


def deny_stdin(prompt=""):
    flush_std()
    _wire._send(_wire._frame("input", _wire._cur.qid, prompt=_q(str(prompt))))
    raise StdinNotImplementedError(_WITHHELD % ("input()", withheld) if withheld else _NO_STDIN)


deny_stdin.__name__ = deny_stdin.__qualname__ = "input"


class Withheld(io.TextIOBase):
    """sys.stdin where the host has a stdin it does not give the cells
    (evalhost run's terminal, what is piped into run --session): reading
    fails at once, saying why, as input() does, where python3 would wait
    for typing or read it. Not empty: a script would take that for input
    that had none."""

    encoding = "utf-8"
    errors = "strict"
    name = "<stdin>"
    mode = "r"
    newlines = None

    def readable(self):
        return True

    def fileno(self):
        return 0

    def isatty(self):
        return False

    def read(self, size=-1):
        self._refuse()

    def readline(self, size=-1):
        self._refuse()

    def readlines(self, hint=-1):
        self._refuse()

    def _refuse(self):
        flush_std()
        raise StdinNotImplementedError(_WITHHELD % ("sys.stdin", withheld))


def deny_getpass(prompt="Password: ", stream=None):
    """getpass.getpass: fails at once, as input() does. The real one opens
    /dev/tty, and a runner in a terminal's background process group stops
    there (SIGTTIN) until the cell times out."""
    flush_std()
    _wire._send(_wire._frame("input", _wire._cur.qid, prompt=_q(str(prompt))))
    raise StdinNotImplementedError(
        "getpass() is not supported: evalhost cells have no interactive stdin; "
        "read secrets from a file or an environment variable instead"
    )


deny_getpass.__name__ = deny_getpass.__qualname__ = "getpass"


def _fix_linecache(lc):
    """Cells run before linecache was imported: give it their source, so
    inspect.getsource, pdb and traceback.print_exc show cell lines."""
    for name, src in list(_core._sources.items()):  # a copy: cells add to it meanwhile
        lc.cache.setdefault(name, _core._cache_entry(name, src))
    pending = _core._code_sources  # -c's (3.13+)
    if pending:
        keep = _core._module("cells").keep_string
        n = len(pending)
        for codes, src in pending[:n]:
            keep(codes, src, lc)
        del pending[:n]


def _fix_getpass(gp):
    if not given:  # else python3's: no /dev/tty here, so it reads stdin, with a warning
        gp.getpass = deny_getpass


def _fix_signal(mod):
    """signal.signal records a cell's handler (handlers.py, loaded by the
    first one set: a subprocess import costs nothing), so that what it
    raises between cells waits for the next cell; getsignal and what
    signal returns give the script's own function, never the runner's
    stand-in for it. A script's own signal.py is left as it is."""
    set_handler, get_handler = getattr(mod, "signal", None), getattr(mod, "getsignal", None)
    if not callable(set_handler) or not callable(get_handler):
        return

    def signal(signalnum, handler):
        old = set_handler(signalnum, handler)
        if callable(handler) or "_evalhost_handlers" in sys.modules:
            _core._module("handlers").record(signalnum, handler)
        return _unguarded(old)

    def getsignal(signalnum):
        return _unguarded(get_handler(signalnum))

    for new, old in ((signal, set_handler), (getsignal, get_handler)):
        new.__name__ = new.__qualname__ = old.__name__
        new.__doc__ = old.__doc__
        new.__module__ = getattr(old, "__module__", mod.__name__)
    mod.signal, mod.getsignal = signal, getsignal


# The debugger's trace function when the script's outermost frame returned
# while it traced (_fix_bdb): python3's goes on to trace its exit's atexit
# handlers, and core's exit sets it again for those alone.
ended_trace = None


def _runner_frame(frame):
    name = frame.f_code.co_filename
    return name in _core._RUNNER_FILES or os.path.dirname(name) == _core._HERE


def _fix_bdb(mod):
    """pdb sees the script's frames as python3's does, the runner's never.
    Its stack (where, up, down) starts at the first frame that is not the
    runner's, as python3's starts at the script's <module> (or runpy's
    for -m): Bdb.get_stack walks up to the outermost frame, the runner's
    bootstrap, so its frames would show above the script's and up would
    reach them. IPython's debugger hides its own frames the same way. A
    stack of nothing but the runner's is left whole. And set_trace
    (breakpoint()) takes that first frame for its bottom (botframe) and
    leaves the runner's above it untraced: python3's has none above, so
    a step, next or return past the script's end stops nowhere after its
    --Return-- (the trace is off till the exit's atexit handlers, which
    python3's traces too: ended_trace), where it went on into the runner's
    code; return at that frame steps, as python3's with no frame to return
    to. A script's own bdb.py is left as it is."""
    cls = getattr(mod, "Bdb", None)
    get_stack = getattr(cls, "get_stack", None)
    if not callable(get_stack):
        return

    def hidden(entry):
        return _runner_frame(entry[0])

    def _get_stack(self, f, t):
        stack, i = get_stack(self, f, t)
        n = 0
        while n < len(stack) and hidden(stack[n]):
            n += 1
        if 0 < n < len(stack):
            del stack[:n]
            i = max(0, i - n)
        return stack, i

    _replace(cls, "get_stack", _get_stack)
    _fix_bdb_bottom(cls)


def _replace(cls, name, new):
    old = getattr(cls, name)
    new.__name__, new.__qualname__, new.__doc__ = old.__name__, old.__qualname__, old.__doc__
    setattr(cls, name, new)


def _script_bottom(frame):
    """The outermost of frame's callers that is not the runner's, when the
    runner's are above it (the script's <module>, or runpy's for -m); None
    where none is (a thread's) or all are."""
    chain = []
    while frame is not None:
        chain.append(frame)
        frame = frame.f_back
    n = len(chain)
    while n > 0 and _runner_frame(chain[n - 1]):
        n -= 1
    return chain[n - 1] if 0 < n < len(chain) else None


def _fix_bdb_bottom(cls):
    set_trace = getattr(cls, "set_trace", None)
    dispatch_call = getattr(cls, "dispatch_call", None)
    dispatch_return = getattr(cls, "dispatch_return", None)
    set_return = getattr(cls, "set_return", None)
    if not all(callable(f) for f in (set_trace, dispatch_call, dispatch_return, set_return)):
        return

    def _set_trace(self, frame=None, *args, **kwargs):
        global ended_trace
        if frame is None:
            frame = sys._getframe().f_back
        bottom = _script_bottom(frame)
        ended_trace = None  # a later breakpoint()'s trace is python3's last one
        self._evalhost_bottom = bottom
        set_trace(self, frame, *args, **kwargs)
        # Tracing and stepping from here: no call of a Python function, which
        # the debugger would stop in
        if bottom is not None:
            above = bottom.f_back
            while above is not None:
                above.f_trace = None
                above = above.f_back
            self.botframe = bottom

    def _dispatch_call(self, frame, arg):
        if _runner_frame(frame):
            return None  # the runner's own frames are never traced
        return dispatch_call(self, frame, arg)

    def _dispatch_return(self, frame, arg):
        global ended_trace
        traced = dispatch_return(self, frame, arg)
        caller = frame.f_back
        if caller is not None and _runner_frame(caller):
            caller.f_trace = None  # 3.13's traces the frame it returns to: not the runner's
        if frame is getattr(self, "_evalhost_bottom", None):
            # python3's interpreter has no frame to return to: its trace
            # stops nowhere until the exit's atexit handlers
            self._evalhost_bottom = None
            trace = sys.gettrace()
            if trace is not None:
                ended_trace = trace
                sys.settrace(None)
        return traced

    def _set_return(self, frame):
        set_return(self, frame)
        caller = frame.f_back
        if caller is not None and self.stopframe is caller and _runner_frame(caller):
            self.stopframe = None  # python3's has no caller there: return steps

    _replace(cls, "set_trace", _set_trace)
    _replace(cls, "dispatch_call", _dispatch_call)
    _replace(cls, "dispatch_return", _dispatch_return)
    _replace(cls, "set_return", _set_return)


def _unguarded(h):
    handlers = sys.modules.get("_evalhost_handlers")  # nothing is guarded before it loads
    return h if handlers is None else handlers.unguarded(h)


def _as_is(module):
    """No adaptation: a module of StdlibHook.own only."""


class _FixingLoader:
    """Runs a stdlib module's own loader, then adapts the module to cells;
    with own, the module's code imports as the runner's own."""

    def __init__(self, loader, fix, own=False):
        self._loader, self._fix, self._own = loader, fix, own

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        if self._own:
            _core._imports().call(self._loader.exec_module, module)
        else:
            self._loader.exec_module(module)
        self._fix(module)

    def __getattr__(self, name):
        return getattr(self._loader, name)


class StdlibHook:
    """Meta-path hook for the few stdlib modules cells need adapted, imported
    lazily so start-up imports nothing; other imports pay one dict lookup.

    Those in own the interpreter imports itself to show a warning, in the
    thread that warned, where no import can be told from a cell's: warnings
    (3.13 for any warning, every version for a coroutine never awaited),
    linecache and tracemalloc (its formatting), tokenize (3.13's linecache,
    for a file on disk) and traceback (a coroutine's origin). Anyone's
    first import of one is found as the runner's own are (imports.py), and
    so are its code's, never in the cwd: a cell in /tmp that warned ran
    another user's /tmp/linecache.py. IPython has all but tracemalloc
    imported as it starts, so cells there get these too."""

    fixes = {"linecache": _fix_linecache, "getpass": _fix_getpass, "_posixsubprocess": _patch_fork_exec,
             "signal": _fix_signal, "warnings": _as_is, "tokenize": _as_is, "traceback": _as_is,
             "tracemalloc": _as_is, "bdb": _fix_bdb, "_colorize": _fix_colorize}
    own = frozenset(("warnings", "linecache", "tokenize", "traceback", "tracemalloc"))

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        fix = cls.fixes.get(name)
        if fix is None:
            return None
        import _frozen_importlib_external

        own = path is None and name in cls.own
        if own:
            path = _core._imports().start_dirs()
        # Frozen first, as the interpreter's finders look: 3.15's linecache
        # is frozen (the runner's own import of it got that one unadapted,
        # without the cells' sources).
        spec = sys.modules["_frozen_importlib"].FrozenImporter.find_spec(name)
        if spec is None:
            spec = _frozen_importlib_external.PathFinder.find_spec(name, path, target)
        if spec is None and own:
            raise ModuleNotFoundError("No module named %r" % name, name=name)
        if spec is not None and spec.loader is not None:
            spec.loader = _FixingLoader(spec.loader, fix, own)
        return spec

    @classmethod
    def install(cls):
        for name, fix in cls.fixes.items():
            # Imported at start-up (site, .pth files), or built in: find_spec
            # never sees a built-in module, and loading one costs nothing.
            if name in sys.modules or name in sys.builtin_module_names:
                fix(sys.modules.get(name) or __import__(name))
        sys.meta_path.insert(0, cls)
