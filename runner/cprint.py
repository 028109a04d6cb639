"""evalhost cprint: the interpreter's own printer of an error (the C code
behind the default sys.excepthook, PyErr_Display, before 3.13) run into a
list of what it wrote, for what only that printer shows: a SyntaxError's
display (asfile) and the suggestion 3.10-3.12 add to an error's last line
(hints); and, 3.8-3.12, a script's uncaught error reported on a stream
the script set as sys.stderr (tracebacks), one write() a piece, as
python3's printer writes. Loaded by those, never on the normal path.

The printer writes to sys.stderr, by name, and to nothing else: for the
call, sys.stderr is a collector that keeps this thread's writes and passes
another thread's on to the stream it replaced (a cell's thread printing
meanwhile loses nothing), then that stream again, unless something set
another one meanwhile.
"""

import _thread
import sys

_core = globals()["_core"]


class Collect:
    """sys.stderr while the interpreter's printer writes an error: this
    thread's writes are kept; another thread's go on to the stream."""

    def __init__(self, stream):
        self.stream, self.thread, self.parts = stream, _thread.get_ident(), []

    def write(self, s):
        if _thread.get_ident() != self.thread:
            return self.stream.write(s) if self.stream is not None else len(s)
        self.parts.append(s)
        return len(s)

    def flush(self):
        if _thread.get_ident() != self.thread and self.stream is not None:
            self.stream.flush()

    def __getattr__(self, name):
        return getattr(self.stream, name)


class Tee(Collect):
    """sys.stderr while the interpreter's printer reports an error on
    stream, a cell's: each write goes on to stream as made, and this
    thread's are kept too; took: stream took them all."""

    took = True

    def write(self, s):
        if _thread.get_ident() == self.thread:
            self.parts.append(s)
        try:
            return self.stream.write(s)
        except BaseException:
            self.took = False
            raise

    def flush(self):
        try:
            return self.stream.flush()
        except BaseException:
            self.took = False
            raise


def report(exc, stream):
    """exc reported on stream by the interpreter's printer, as python3's
    uncaught error is (its writes and flush go to stream, one a piece):
    (the strings it wrote, whether stream took them all), or None where
    that printer is not at hand."""
    tee = Tee(stream)
    if _show(exc, tee) is None:
        return None
    return tee.parts, tee.took


def hook():
    """The interpreter's own sys.excepthook, as core found it at start-up
    (not sys.__excepthook__ now: a cell may have put its own there, a
    builtin such as print too), or None when that was not a builtin."""
    hook = _core._excepthook
    return hook if type(hook) is type(len) else None


def printed(exc):
    """The strings the interpreter's printer writes for exc (its type, its
    __traceback__, what it chains), in order, or None where that printer
    is not at hand or failed."""
    collect = Collect(sys.stderr)
    if not _show(exc, collect):
        return None
    return collect.parts


def _show(exc, stderr):
    """The interpreter's printer run on exc with sys.stderr set to stderr
    for the call, then the stream it replaced again, unless something set
    another one meanwhile: None where that printer is not at hand, else
    whether it ran without an Exception (on stderr's took too)."""
    show = hook()
    if show is None:
        return None
    old, sys.stderr = sys.stderr, stderr
    try:
        show(type(exc), exc, exc.__traceback__)
        return True
    except Exception:
        stderr.took = False
        return False
    finally:
        if sys.stderr is stderr:
            sys.stderr = old
