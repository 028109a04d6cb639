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
    """tb with a frame of the cell's in front, at line. Its tb_lasti is -1:
    no instruction, so no columns, and a traceback shows the line without
    carets, as python3 shows a statement the signal landed in."""
    # Moved, not padded: a cell 20,000 lines down would compile 20 KB of newlines.
    code = compile("_f()", name, "eval").replace(co_firstlineno=line)
    frame = eval(code, _core._ns, {"_f": sys._getframe})
    return type(tb)(tb, frame, -1, line)


def take():
    """The exit begins: the script's handlers back, and what one raised
    between cells (None if nothing), for the exit to report."""
    global pending, _exiting
    _exiting = True
    unguard()
    _own.clear()
    e, pending = pending, None
    return e
