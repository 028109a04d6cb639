"""evalhost tracebacks: error frames whose traceback shows the cell's lines
and never the runner's own files, and a script's uncaught error reported
as python3 reports it (report_uncaught: sys.excepthook, sys.stderr,
sys.tracebacklimit). Loaded by core on the first error.
"""

import builtins
import os
import sys

_core = globals()["_core"]
_wire = _core._wire
_q = _core._q
_GROUP = getattr(builtins, "BaseExceptionGroup", ())  # 3.11+


def _seed_linecache():
    cache = getattr(sys.modules.get("linecache"), "cache", None)  # None: not (yet) imported
    if cache is None:
        return
    for name, src in list(_core._sources.items()):
        if name not in cache:
            cache[name] = _core._cache_entry(name, src)


def _is_runner_file(name):
    """The runner's own files: core, bootstrap, prelude helpers, IPython shims."""
    return name in _core._RUNNER_FILES or os.path.dirname(name) == _core._HERE


def _strip_runner(te, seen):
    """Drop runner frames, and frames before the first cell frame, everywhere."""
    if te is None or id(te) in seen:
        return
    seen.add(id(te))
    frames = list(te.stack)
    files = _core._cell_files  # a script's cells are named as its file
    for i, f in enumerate(frames):
        if f.filename.startswith("<cell ") or f.filename in files:
            frames = frames[i:]
            break
    te.stack = type(te.stack).from_list([f for f in frames if f.filename in files or not _is_runner_file(f.filename)])
    _strip_runner(te.__cause__, seen)
    _strip_runner(te.__context__, seen)
    for sub in getattr(te, "exceptions", None) or ():
        _strip_runner(sub, seen)


def traceback_lines(exc, only=False, limit=None, hints=True):
    """exc's traceback as lines; limit: python3's sys.tracebacklimit
    (script_limit), else every frame; hints: with the suggestion python3's
    report adds to a NameError's, AttributeError's or ImportError's last
    line ("Did you mean: 'print'?", hints.py), else none. Formatting
    imports too (ast for 3.11's carets, unicodedata for wide characters,
    3.13's linecache its tokenize): all of it as the runner's own imports,
    never the cwd's."""
    return _text(exc, only, limit, hints)[0]


def _text(exc, only=False, limit=None, hints=True, script=False, chunks=None, colorize=False):
    """(lines, evalue): exc's traceback and the str(exc) it shows, taken
    once, as python3's printer takes it (a __str__ with side effects runs
    once). script: the last line of each exception as python3's own
    printer writes it (3.8-3.10: printer.py), not the traceback module.
    chunks: a list to add the strings TracebackException.format gave;
    colorize: in 3.13+'s colours (on_terminal), the lines still plain."""
    return _core._imports().call(_lines, exc, only, limit, hints, script, chunks, colorize)


def _lines(exc, only, limit=None, hints=True, script=False, chunks=None, colorize=False):
    traceback = _core._own("traceback")
    printer = _core._module("printer")
    make = printer.factory(traceback)
    _seed_linecache()
    colours = {"colorize": True} if colorize else {}
    if only:
        te = make(type(exc), exc, None, **_COMPACT)
        printer.python3_names(te, exc, script)
        parts = list(te.format_exception_only(**colours))
    else:
        def build():
            # An explicit limit: None would read sys.tracebacklimit, which
            # TracebackException applies to the outermost frames, the runner's.
            te = make(type(exc), exc, exc.__traceback__, limit=sys.maxsize, **_COMPACT)
            printer.python3_names(te, exc, script)  # before hints.py adds to the last line
            return te

        te = _core._module("hints").make(build, exc, hints) if _may_hint(exc, hints) else build()
        _strip_runner(te, set())
        if limit is not None:
            _keep_last(te, limit, set())
        parts = list(te.format(**colours))
    if chunks is not None:
        chunks.extend(parts)
    text = "".join(parts)
    if colorize:
        text = _plain(text)
    return text.rstrip("\n").split("\n"), printer.evalue(te, exc)


def _plain(text):
    """text without the colours _colorize gave it: what the report says,
    for the error frame, which carries no escape sequences; formatted once,
    as python3's report takes each str() once."""
    colors = _core._own("_colorize").ANSIColors
    for code in sorted({v for v in vars(colors).values() if isinstance(v, str) and v.startswith("\x1b")},
                       key=len, reverse=True):
        text = text.replace(code, "")
    return text


def on_terminal(err):
    """Whether python3 would colour its report of an error written to err
    (its sys.stderr) here: 3.13+, whose printer asks
    _colorize.can_colorize, which sees the pipes the host shows on a
    terminal as one (stdio._TerminalOs) and follows the environment
    (NO_COLOR, PYTHON_COLORS, FORCE_COLOR, TERM=dumb) as python3's does.
    Only where the host shows fd 2 on a terminal (evalhost run in one),
    whatever the environment says: never serve's, mcp's or a pipe's, whose
    text has no escape sequences. And only a script's cell's, as python3
    runs it: not a notebook's nor IPython's, whose reports are their own."""
    if sys.version_info < (3, 13) or not _core._stdio.err_shown or _core._ipython_mode:
        return False
    if not getattr(_wire._cur, "in_script", False):
        return False
    try:
        colorize = _core._own("_colorize")
        try:
            return bool(colorize.can_colorize(file=err))
        except TypeError:  # 3.13.0's asks sys.stderr, err here
            return bool(colorize.can_colorize())
    except Exception:
        return False


_COMPACT = {"compact": True} if sys.version_info >= (3, 10) else {}


def _may_hint(exc, wanted):
    """Whether exc's traceback needs hints.py: 3.10+, an exception in its
    chain that a suggestion may be given for (3.13+: one to hold back)."""
    if sys.version_info < (3, 10) or (wanted and sys.version_info >= (3, 13)):
        return False
    seen, todo = set(), [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if issubclass(type(e), (NameError, AttributeError, ImportError)):  # not a __class__ that lies
            return True
        todo += [e.__cause__, e.__context__]
        if issubclass(type(e), _GROUP):
            todo += e.exceptions
    return False


def script_limit():
    """sys.tracebacklimit as python3's own report applies it (PyTraceBack_Print,
    3.13's _print_exception_bltin): the innermost N frames of each
    traceback in the chain, none (nor the "Traceback" line) for N <= 0;
    None when unset or not an int, as there."""
    limit = getattr(sys, "tracebacklimit", None)
    return limit if isinstance(limit, int) else None


def _keep_last(te, limit, seen):
    if te is None or id(te) in seen:
        return
    seen.add(id(te))
    frames = list(te.stack)
    te.stack = type(te.stack).from_list(frames[-limit:] if limit > 0 else [])
    _keep_last(te.__cause__, limit, seen)
    _keep_last(te.__context__, limit, seen)
    for sub in getattr(te, "exceptions", None) or ():
        _keep_last(sub, limit, seen)


def _without_runner(tb):
    """tb's chain minus the runner's frames, or tb itself when it has none."""
    kept, n, t = [], 0, tb
    while t is not None:
        n += 1
        if not _is_runner_file(t.tb_frame.f_code.co_filename):
            kept.append(t)
        t = t.tb_next
    if len(kept) == n:
        return tb
    new = None
    for t in reversed(kept):
        new = type(tb)(new, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return new


def exit_unraisable(u, prev):
    """Pass u on to prev (the hook in place when the exit began) without the
    runner's frames: a KeyboardInterrupt that ends an atexit handler fires
    where the runner's writer let SIGINT through again, so Python's own
    report ("Exception ignored in atexit callback") would show wire.py."""
    tb = u.exc_traceback
    kept = _without_runner(tb) if tb is not None else None
    if kept is not tb:
        if u.exc_value is not None:
            u.exc_value.__traceback__ = kept
        u = type(u)((u.exc_type, u.exc_value, kept, u.err_msg, u.object))
    # Python's own hook imports traceback in 3.13: the runner's own imports then
    own = _core._imports().call
    try:
        if prev is sys.__unraisablehook__:
            own(prev, u)
        else:
            prev(u)
    except BaseException as e:  # the user's hook failed: said as python3 says it, naming that hook
        t = _without_runner(e.__traceback__)
        own(sys.__unraisablehook__, type(u)((type(e), e.with_traceback(t), t, "Exception ignored in sys.unraisablehook", prev)))


def show_exit_warning(msg):
    """A warning shown from here to the exit (core._exit_warnings), as at
    python3's teardown, where its C code shows them, the warnings module
    gone: one raised where no frame of the cells' is (an unclosed file's,
    as the runner clears the cells' namespace, or a collection's) is placed
    where the interpreter places a warning without a frame (sys:1; 3.13
    <sys>:0), as python3's has no frame left at all; and none suggests
    tracemalloc (-X dev)."""
    name, line = msg.filename, msg.lineno
    source = ""
    if _is_runner_file(name):
        name, line = ("<sys>", 0) if sys.version_info >= (3, 13) else ("sys", 1)
    else:
        source = (msg.line if msg.line is not None else _core._own("linecache").getline(name, line)).strip()
    text = "%s:%s: %s: %s\n" % (name, line, msg.category.__name__, msg.message)
    if source:
        text += "  %s\n" % source
    try:
        (msg.file if msg.file is not None else sys.stderr).write(text)
    except Exception:
        pass


def send_error(exc, only=False, exit=False, limit=None, reported=False, text=None, script=False):
    """exc's error frame; its (lines, evalue), when made already (a report
    wrote them), else made here. evalue is str(exc), without python3's
    suggestion, as Jupyter's kernel gives it; the one str() the traceback
    took (python3's printer calls it once)."""
    if text is None and not exit and not reported:
        err = getattr(sys, "stderr", None)
        if err is _core._stdio.err and on_terminal(err):  # python3's report, coloured, where it writes it
            text, reported = _report_coloured(err, exc, only, limit, script)
    if text is None:
        text = _safe_text(exc, only, limit, script=script)
    lines, evalue = text
    if script and not reported:
        # A renderer shows a script's traceback as python3's stderr writes
        # it (errors="backslashreplace"): a lone surrogate is "\\ud800",
        # not the U+FFFD a JSON decoder would make of it.
        lines = [line.encode("utf-8", "backslashreplace").decode("utf-8") for line in lines]
    send_error_lines(type(exc).__name__, evalue, lines, exit, reported, _core._stdio.dies_of_sigint(exc))


def _report_coloured(err, exc, only, limit, script):
    """exc's report written to err as python3's printer writes it on a
    terminal, in colour (print()'s of each string the traceback module
    gives); ((lines, evalue), whether err took them all)."""
    chunks = []
    text = _safe_text(exc, only, limit, script=script, chunks=chunks, colorize=True)
    return text, _write(err, text[0], chunks)


def _safe_text(exc, only, limit, hints=True, script=False, chunks=None, colorize=False):
    try:
        return _text(exc, only, limit, hints, script, chunks, colorize)
    except Exception as e:  # a broken __str__ or traceback must not lose the error
        try:
            evalue = str(exc)
        except Exception:
            evalue = "<unprintable %s>" % type(exc).__name__
        return ["%s: %s" % (type(exc).__name__, evalue), "(traceback unavailable: %r)" % (e,)], evalue


def _safe_lines(exc, only, limit, hints=True, script=True):
    return _safe_text(exc, only, limit, hints, script)[0]


def send_error_lines(ename, evalue, lines, exit=False, reported=False, keyboard_interrupt=False):
    """An error frame; its traceback is the lines given. exit: it is the
    cell's SystemExit, which python3 would end the script by, silently.
    reported: the cell's output already holds python3's report of it
    (report_uncaught). keyboard_interrupt: it is the builtin
    KeyboardInterrupt itself (3.14+: or a subclass; stdio.dies_of_sigint),
    which python3 dies of by SIGINT (130) when it ends a script; a class
    of that name only ends it with 1, so the name cannot tell."""
    _core._flush_std()
    fields = {"exit": "true"} if exit else {}
    if reported:
        fields["reported"] = "true"
    if keyboard_interrupt:
        fields["keyboardInterrupt"] = "true"
    _wire._send(_wire._frame("error", _wire._cur.qid, ename=_q(ename), evalue=_q(evalue),
                             traceback="[%s]" % ",".join(map(_q, lines)), **fields))


# --- a script's uncaught error (Cell.fail) ---------------------------------

_MISSING = object()


def report_uncaught(exc, cell):
    """exc ended a script's cell: reported as python3 reports an uncaught
    exception (PyErr_Print), then its error frame sent, so every client
    still gets ename and evalue. The default sys.excepthook writes the
    traceback, sys.tracebacklimit applied, to sys.stderr: the runner's own
    sys.stderr gets it as the frame's text (a renderer shows it), or, on a
    terminal where python3 3.13+ colours it (on_terminal), the text itself
    in colour (send_error); a replaced one gets the text itself; then the
    frame is marked reported.
    A user's hook is called with the traceback python3 would give it (no
    runner frames), interruptible as the cell was; what it prints is the
    cell's output, and the frame is marked reported. A hook that raises is
    said as python3 says it ("Error in sys.excepthook:"). Returns the
    SystemExit a hook raised, which ends the script in its place (the
    caller's to handle), else None."""
    try:
        return _report(exc, cell)
    except Exception:  # a report that failed must neither lose the error nor end the runner
        send_error(exc, script=True)
        return None


def _report(exc, cell):
    limit = script_limit()
    hook = getattr(sys, "excepthook", _MISSING)
    if hook is not _MISSING and hook is _core._default_excepthook:  # not a cell's, in sys.__excepthook__ too
        err = getattr(sys, "stderr", _MISSING)
        if err is _MISSING and _lost_stderr(exc):
            send_error(exc, limit=limit, reported=True)
            return None
        if err is _core._stdio.err:
            send_error(exc, limit=limit, script=True)
            return None
        lines, evalue, reported = _report_to(err, exc, limit)  # once: a suggestion runs the cell's __dir__
        send_error(exc, limit=limit, reported=reported, text=(lines, evalue))
        return None
    _chain_without_runner(exc, set())
    tb = exc.__traceback__
    reported = True
    if hook is _MISSING:
        text = _safe_text(exc, False, limit, script=True)
        reported = _write(sys.stderr, ["sys.excepthook is missing"] + text[0])
    else:
        raised = _call_hook(hook, exc, tb, cell)
        if isinstance(raised, SystemExit):
            return raised
        if raised is None:  # python3 ran the hook alone: no suggestion, no __dir__ run for one
            text = _safe_text(exc, False, limit, hints=False, script=True)
        else:
            text = _safe_text(exc, False, limit, script=True)
            reported = _write(sys.stderr, _hook_failed(raised, text[0], limit))
    send_error(exc, limit=limit, reported=reported, text=text)
    return None


def _lost_stderr(exc):
    """exc reported as python3 reports it with sys.stderr deleted: its
    printer dumps the object and says "lost sys.stderr" on C's stderr, fd
    2, which the interpreter's own hook, run here with no sys.stderr,
    does too (addresses and refcount are this process's). Whether that
    hook was at hand and ran; else the frame goes unreported and a client
    shows the traceback."""
    show = _core._module("cprint").hook()
    if show is None:
        return False
    _core._flush_std()
    _wire._touch(2)  # C's write goes straight to fd 2
    try:
        show(type(exc), exc, exc.__traceback__)
    except Exception:
        return False
    return True


def _report_to(err, exc, limit):
    """exc reported on err, a stream the cells set in place of sys.stderr,
    as python3 reports it there: one write() a piece, as its printer
    writes them (3.8-3.12 the interpreter's own, C, run on exc without the
    runner's frames: what its write()s get, str(exc) taken and a
    suggestion worked out, once, is python3's; 3.13+ print()'s of each
    string TracebackException.format gives, the end "" too). (lines,
    evalue, whether err took them all)."""
    if err is None:  # python3 skips it silently
        return _safe_text(exc, False, limit, script=True) + (True,)
    try:
        err.flush()  # python3 flushes it first (flush_io), a failure unsaid
    except Exception:
        pass
    if sys.version_info < (3, 13):
        _chain_without_runner(exc, set())
        done = _core._module("cprint").report(exc, err)  # the cell's write()s import as the cell's
        if done is not None:
            pieces, took = done
            lines = "".join(pieces).rstrip("\n").split("\n")
            return lines, _core._module("printer").printed_evalue(pieces, exc), took
    chunks = []
    lines, evalue = _safe_text(exc, False, limit, script=True, chunks=chunks, colorize=on_terminal(err))
    return lines, evalue, _write(err, lines, chunks)


def report_exit(exc):
    """The message of exc, a SystemExit whose code is not an int or None,
    written as python3 writes it as the script ends (handle_system_exit),
    its streams flushed first (flush_io): str(code), taken once, to
    sys.stderr, or to fd 2 when that is None or missing (_fd2_text), then
    a newline, to fd 2 when sys.stderr cannot take it. A str(), a
    sys.stderr.write() or 3.12+'s encoding for fd 2 that fails leaves the
    newline alone, and 3.12+ report its error later in the exit
    (_exit_pending). Returns str(code), None when that failed, for the
    frames, so a __str__ runs once, as under python3."""
    _core._flush_std()
    handled, pending = sys.exc_info()[1], None  # what the runner handles, no context of python3's
    try:
        text = str(exc.code)
    except BaseException as e:  # python3's C code takes any exception
        text, pending = None, e
    err = getattr(sys, "stderr", None)
    if text is not None and err is None:
        try:
            os.write(2, _fd2_text(text))
        except UnicodeEncodeError as e:  # 3.12+: nothing written, the error pending
            pending = e
        except OSError:  # C's stdio: its failure sets no error
            pass
    elif text is not None:
        try:
            err.write(text)
        except BaseException as e:
            pending = e
    _exit_newline()
    if pending is not None:
        _drop_context(pending, handled)
        _exit_pending(pending)
    return text


def report_exit_overflow():
    """sys.exit(N) past a C long as python3's exit ends by it: status -1
    (wire._exit_status) and PyLong_AsLong's OverflowError left pending,
    which 3.12+ report (_exit_pending)."""
    _core._flush_std()
    _exit_pending(OverflowError("Python int too large to convert to C long"))


def _exit_pending(e):
    """e, the error of the exit's str(code) or its write of the message,
    as python3 reports it: it stays pending after the message (3.8-3.11
    drop it), and 3.12+ report it when the exit waits for threads
    (wait_for_thread_shutdown), before the atexit handlers, through
    sys.unraisablehook: 3.12 with no message (so only the traceback
    shows), unless the script imported threading, whose _shutdown then
    runs over it and it is lost; 3.13+ as "Exception ignored on threading
    shutdown" (their _shutdown, run over it, fails with a SystemError of
    its own instead when threading is imported: not done here); 3.14+
    clear it unreported, as 3.8-3.11 do."""
    if (sys.version_info < (3, 12) or sys.version_info >= (3, 14)
            or (sys.version_info < (3, 13) and "threading" in sys.modules)):
        return
    msg = "Exception ignored on threading shutdown" if sys.version_info >= (3, 13) else None
    u = _core._stdio.unraisable_args(e, msg, None)
    if u is None:
        return
    hook = getattr(sys, "unraisablehook", None)
    try:
        exit_unraisable(u, sys.__unraisablehook__ if hook is None else hook)
    except BaseException:  # the default hook failed too (a sys.stderr that fails): python3 clears it
        pass


def _fd2_text(text):
    """text as python3's exit writes it to fd 2 (PyObject_Print): 3.12+
    raise the UnicodeEncodeError of a text UTF-8 cannot encode (a lone
    surrogate's), 3.8-3.11 write its backslash escapes."""
    if sys.version_info >= (3, 12):
        return text.encode("utf-8")
    return text.encode("utf-8", "backslashreplace")


def _exit_newline():
    """The newline after an exit's message (PySys_WriteStderr): to
    sys.stderr, as it is now, or to fd 2 when that cannot take it."""
    err = getattr(sys, "stderr", None)
    try:
        if err is not None:
            err.write("\n")
            return
    except Exception:
        pass
    try:
        os.write(2, b"\n")
    except OSError:
        pass


def send_exit_error(exc, reported=False, script=False, text=None):
    """A SystemExit's error frame. script: it ended a script, whose exit
    is python3's, which takes no str() of the exception, so neither does
    its traceback: text, the str() of a code that is not an int, taken
    once (report_exit, exit_text; None when that failed), or an int's own,
    stands for it there and is its evalue. Else (a notebook's cell)
    str(exc) is taken, as Jupyter's kernel takes it."""
    printer = _core._module("printer")
    if script:
        printer.given = (exc, exit_text(exc.code) if isinstance(exc.code, int) else text)
    try:
        send_error(exc, exit=True, reported=reported)
    finally:
        printer.given = None


def exit_text(code):
    """The text a script's SystemExit(code) stands for in its error frame,
    where python3 takes no str() of the exception, only of a code that is
    not an int (once; None when it failed): an int's as int's own, never a
    subclass's __str__, which python3's exit does not call."""
    try:
        if isinstance(code, int) and type(code) is not bool:
            return int.__repr__(code)
        return str(code)
    except Exception:  # past int's digit limit too
        return None


def _to_fd2(text):
    """text and a newline on fd 2, as python3 writes an exit's message
    where sys.stderr is None or deleted; whether it was written."""
    try:
        os.write(2, (text + "\n").encode("utf-8", "backslashreplace"))
    except OSError:
        return False
    return True


def report_at_exit(exc):
    """exc, raised by a script's signal handler after its last cell ended
    (handlers.py), reported as python3 reports an uncaught exception at
    the script's end (PyErr_Print): a SystemExit's message, else the
    traceback through sys.excepthook, on sys.stderr, the exit's output.
    Returns python3's exit status for it."""
    if isinstance(exc, SystemExit):
        if exc.code is None:
            return 0
        status, message = _wire._exit_status(exc.code)
        err = getattr(sys, "stderr", None)
        if message is not None and err is None:
            _to_fd2(message)
        elif message is not None:
            _write(err, [message])
        return status
    limit = script_limit()
    hook = getattr(sys, "excepthook", _MISSING)
    err = getattr(sys, "stderr", _MISSING)  # deleted: a write fails, said by _write
    _chain_without_runner(exc, set())
    if hook is _MISSING:
        _write(err, ["sys.excepthook is missing"] + _safe_lines(exc, False, limit))
    elif hook is _core._default_excepthook:
        if err is not _MISSING and on_terminal(err):
            _report_coloured(err, exc, False, limit, True)
        elif err is not _MISSING or not _lost_stderr(exc):
            _write(err, _safe_lines(exc, False, limit))
    else:
        raised = _call_hook(hook, exc, exc.__traceback__)
        if raised is not None:
            _write(err, _hook_failed(raised, _safe_lines(exc, False, limit), limit))
    return 1


def chain_without_runner(exc):
    """The runner's frames off exc's traceback and its chain's (IPython
    mode's showtraceback too)."""
    _chain_without_runner(exc, set())


def without_runner(tb):
    return _without_runner(tb)


def _chain_without_runner(exc, seen):
    """The runner's frames off the traceback of exc and of every exception
    its chain holds (cause, context, a group's), as a hook formats them all:
    a cause raised inside a runner helper the cells called (display) has
    the helper's frames."""
    if exc is None or id(exc) in seen:
        return
    seen.add(id(exc))
    if exc.__traceback__ is not None:
        exc.__traceback__ = _without_runner(exc.__traceback__)
    _chain_without_runner(exc.__cause__, seen)
    _chain_without_runner(exc.__context__, seen)
    for sub in getattr(exc, "exceptions", None) or ():
        _chain_without_runner(sub, seen)


def _call_hook(hook, exc, tb, cell=None):
    """hook(type, value, tb), with SIGINT raising in it again when it runs
    for a cell; what it raised, or None. It runs in an except block, so
    what it raises gets exc as its context there, which python3's call,
    made with no exception being handled, does not give: taken off."""
    if cell is not None:
        cell.running = True
    try:
        hook(type(exc), exc, tb)
        if cell is not None:
            cell.running = False
    except BaseException as e:
        if cell is not None:
            cell.running = False
        _drop_context(e, exc)
        return e
    return None


def _hook_failed(raised, lines, limit):
    """The lines python3 writes when sys.excepthook raised reporting an
    exception whose lines are given."""
    return ["Error in sys.excepthook:"] + _safe_lines(raised, False, limit) + ["", "Original exception was:"] + lines


def _drop_context(e, exc):
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if e.__context__ is exc:
            e.__context__ = None
            return
        e = e.__context__


def _write(f, lines, chunks=None):
    """Write lines to f, as the interpreter's report writes to sys.stderr;
    whether f took them or was None, which python3 skips silently. A
    stream that fails (no write, closed, binary) loses them, where python3
    says "lost sys.stderr" on fd 2: False, so the error frame goes
    unreported and a client shows it, never a silent failure."""
    if f is None:
        return True
    try:
        if chunks:
            for s in chunks:  # as print(s, file=f, end="") writes it, no flush after
                f.write(s)
                f.write("")
        else:
            f.write("\n".join(lines) + "\n")
            f.flush()
    except Exception:
        return False
    return True
