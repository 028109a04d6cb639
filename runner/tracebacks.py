"""evalhost tracebacks: error frames whose traceback shows the cell's lines
and never the runner's own files. Loaded by core on the first error.
"""

import os
import sys

_core = globals()["_core"]
_wire = _core._wire
_q = _core._q


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


def traceback_lines(exc, only=False):
    """exc's traceback as lines. Formatting imports too (ast for 3.11's
    carets, unicodedata for wide characters, 3.13's linecache its tokenize):
    all of it as the runner's own imports, never the cwd's."""
    return _core._imports().call(_lines, exc, only)


def _lines(exc, only):
    traceback = _core._own("traceback")
    _seed_linecache()
    if only:
        text = "".join(traceback.format_exception_only(type(exc), exc))
    else:
        try:
            te = traceback.TracebackException(type(exc), exc, exc.__traceback__, compact=True)
        except TypeError:  # Python < 3.10
            te = traceback.TracebackException(type(exc), exc, exc.__traceback__)
        _strip_runner(te, set())
        text = "".join(te.format())
    return text.rstrip("\n").split("\n")


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


def exit_warnings():
    """From here to the exit, warnings show as at python3's teardown, where
    its C code shows them, the warnings module gone: one raised where no
    frame of the cells' is (an unclosed file's, as the runner clears the
    cells' namespace, or a collection's) is placed where the interpreter
    places a warning without a frame (sys:1; 3.13 <sys>:0), as python3's
    has no frame left at all; and none suggests tracemalloc (-X dev)."""
    w = sys.modules.get("warnings")
    if w is None or not callable(getattr(w, "_showwarnmsg", None)):
        return

    def show(msg):
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

    w._showwarnmsg = show


def send_error(exc, only=False, exit=False):
    try:
        evalue = str(exc)
    except Exception:
        evalue = "<unprintable %s>" % type(exc).__name__
    try:
        lines = traceback_lines(exc, only)
    except Exception as e:  # a broken __str__ or traceback must not lose the error
        lines = ["%s: %s" % (type(exc).__name__, evalue), "(traceback unavailable: %r)" % (e,)]
    send_error_lines(type(exc).__name__, evalue, lines, exit)


def send_error_lines(ename, evalue, lines, exit=False):
    """An error frame; its traceback is the lines given. exit: it is the
    cell's SystemExit, which python3 would end the script by, silently."""
    _core._flush_std()
    fields = {"exit": "true"} if exit else {}
    _wire._send(_wire._frame("error", _wire._cur.qid, ename=_q(ename), evalue=_q(evalue),
                             traceback="[%s]" % ",".join(map(_q, lines)), **fields))
