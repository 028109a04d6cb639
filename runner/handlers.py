"""evalhost runner: what a script's signal handler raises between cells.

python3 runs a handler where the signal lands, in the script's statements,
and what it raises propagates from there. Here a signal can land in the
runner's own code between cells, as it ends a cell or waits for the next
request (a signal passed on as a cell ends, one sent while a shell cell
runs, a thread's os.kill): what the handler raised went up through the
runner's request loop, and the interpreter died with status 1, its
traceback shown to no one.

So from the end of one cell's run to the start of the next (cells.Cell.run:
guard, unguard) each handler a cell set with signal.signal (stdio's
adaptation of the signal module records it here: record) is replaced by its
Guarded: the handler still runs at once, as python3's does (one that
prints, counts or dumps does so between cells too), but what it raises is
kept (pending). The next cell raises it at its first statement
(raise_pending), as python3 would have at its next statement: the cell
fails with it, its traceback that statement's line and then the handler's
frames; a SystemExit ends the script there with its status. When no cell
comes (the exit request, the host gone), the exit reports it as python3
reports an uncaught exception at the script's end and exits with its
status (core._report_held, tracebacks.report_at_exit), the handlers put
back first (take), so that in the exit (atexit handlers, the wait for
threads) they raise where they land, as in python3's. While a cell runs
the script's own function is installed, so no frame of the runner's comes
between the cell's code and the handler's.

signal.getsignal and what signal.signal returns give back the script's own
function, never its Guarded. SIGINT's handler is not taken: between cells
the runner's own takes SIGINT (core._on_sigint), and a cell's is put back
after the cell (cells.Cell.finish).
"""

import _signal
import sys

_core = globals()["_core"]

pending = None  # what a handler raised between cells; the first only
_own = {}  # signal number: (the script's handler, its Guarded)
_exiting = False  # take was called: no handler is guarded again


class Guarded:
    """A script's handler, installed between cells: it runs, and what it
    raises waits for the next cell."""

    __slots__ = ("handler",)

    def __init__(self, handler):
        self.handler = handler

    def __call__(self, signum, frame):
        try:
            self.handler(signum, frame)
        except BaseException as e:
            _keep(e)


def _keep(e):
    global pending
    if pending is None:  # python3 would be unwinding the first: it is the one reported
        pending = e


def unguarded(h):
    """The script's own handler for what _signal.getsignal gives."""
    return h.handler if type(h) is Guarded else h


def record(signalnum, handler):
    """Record the handler signal.signal just installed (the script's own
    function; SIG_DFL, SIG_IGN or SIGINT's forget it). Outside a cell's
    run (an extension module as the runner starts) its Guarded goes in
    at once."""
    sig = int(signalnum)
    if not callable(handler) or sig == _signal.SIGINT:
        _own.pop(sig, None)
        return
    g = Guarded(handler)
    _own[sig] = (handler, g)
    if not _core._wire._cur.running and not _exiting:
        _signal.signal(sig, g)


def guard():
    """A cell's run ended: each handler of the script's becomes its Guarded."""
    for sig, (h, g) in _own.items():
        if _signal.getsignal(sig) is h:
            _signal.signal(sig, g)


def unguard():
    """A cell's run starts (or the exit): the script's own handlers back."""
    for sig, (h, g) in _own.items():
        if _signal.getsignal(sig) is g:
            _signal.signal(sig, h)


def first_line(src):
    """The line (from 1) of src's first statement, where python3's next
    statement would have been: its first line that is neither blank nor
    a comment; 0 when there is none."""
    for i, line in enumerate(src.split("\n")):
        s = line.strip()
        if s and s[0] != "#":
            return i + 1
    return 0


def raise_pending(name=None, line=0):
    """Raise what a handler raised between cells, if anything; with the
    cell's name and the line of its first statement, as if it landed
    there: that line is the traceback's first frame, as python3's."""
    global pending
    e, pending = pending, None
    if e is None:
        return
    if name is not None and line > 0 and e.__traceback__ is not None:
        e.__traceback__ = _landed(e.__traceback__, name, line)
    try:
        raise e
    finally:
        e = None


def _landed(tb, name, line):
    """tb with a frame of the cell's in front, at line. Where the line is
    a statement that calls (os.read(r, 1)), python3's signal lands in its
    first call: the frame's instruction has that call's columns, so a
    traceback shows its carets as python3's (3.11+). Elsewhere tb_lasti
    is -1: no instruction, so no columns, and the line shows without
    carets, as python3 shows a statement the signal landed in."""
    cols = _first_call(name, line)
    src = "_f()"
    if cols is not None:
        col, end = cols
        call = "_f(" + " " * (end - col - 4) + ")"
        src = "(" + " " * (col - 1) + call + ")" if col else call
    # Moved, not padded: a cell 20,000 lines down would compile 20 KB of newlines.
    code = compile(src, name, "eval").replace(co_firstlineno=line)
    frame = eval(code, _core._ns, {"_f": sys._getframe})
    lasti = -1
    if cols is not None:
        for i, pos in enumerate(code.co_positions()):
            if pos[2:] == cols:
                lasti = 2 * i
                break
    return type(tb)(tb, frame, lasti, line)


def _first_call(name, line):
    """The columns (UTF-8 offsets) of the first call line's statement
    makes, when it is on that line alone and spans at least 4; else None."""
    if sys.version_info < (3, 11):
        return None
    try:
        text = _core._own("linecache").getline(name, line)
        body = text.lstrip(" \t")
        indent = len(text.encode("utf-8")) - len(body.encode("utf-8"))
        ast = _core._own("ast")
        stmt = ast.parse(body.rstrip("\r\n")).body[0]
    except Exception:
        return None
    found = []

    def visit(node):  # in evaluation order: a call's callee and arguments first
        for child in ast.iter_child_nodes(node):
            if not found:
                visit(child)
        if not found and isinstance(node, ast.Call):
            found.append(node)

    visit(stmt)
    if not found or found[0].end_lineno != 1 or found[0].end_col_offset - found[0].col_offset < 4:
        return None
    return indent + found[0].col_offset, indent + found[0].end_col_offset


def take():
    """The exit begins: the script's handlers back, and what one raised
    between cells (None if nothing), for the exit to report."""
    global pending, _exiting
    _exiting = True
    unguard()
    _own.clear()
    e, pending = pending, None
    return e
