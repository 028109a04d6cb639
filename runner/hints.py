"""evalhost hints: the suggestion python3 adds to the last line of an
error it reports ("NameError: name 'prnt' is not defined. Did you mean:
'print'?", an AttributeError's too; 3.12+ a from-import's ImportError's and
"Did you forget to import 'sys'?"), in the runner's tracebacks, which the
traceback module formats (tracebacks.py). Loaded by tracebacks on an error
that may have one, 3.10+, and by the warm-up (3.10-3.12).

3.10-3.12: python3's printer (C, sys.excepthook's) works the suggestion
out as it prints, for an exception of exactly NameError, AttributeError or
(3.12) ImportError, not a subclass; the traceback module does not (3.10,
3.11) or does it its own way (3.12: subclasses too, a NameError's frame's
names as one list of at most 750, the module of an ImportError imported,
no "?" after "Did you forget to import 'x'" in 3.12.0-1). So the runner
asks that printer (cprint), for each exception the traceback shows, on a
stand-in: an exception of the same type whose message is a mark and which
holds only what the suggestion reads (name; an AttributeError's obj; a
NameError's innermost frame, as a traceback of one entry; an ImportError's
name_from), and takes what the printer wrote after the mark. So the cell's
code that runs is what python3's printer runs for the suggestion, once: the
object's or module's __dir__, 3.12's getattr of a NameError's `self`.
What that code writes to sys.stderr is written there after the printer
returns (python3's shows it inside the error's last line). The printer also
shows the innermost frame's line, reading its file (as python3 does).

An AttributeError whose obj was never set reads as obj None, so its
stand-in's is None, whose names can give a suggestion python3's (no obj:
none) does not; only an AttributeError raised with name= and no obj= can be
so.

3.12+: the traceback module's own suggestion is held back while the
runner's TracebackException is made (hold: the chain's names are None
meanwhile, set through the exception types' own slots, back while the
maker takes an exception's str() (printer.around), for a __str__ that
reads them), so the cell's
code does not run for it too; 3.13+, where it is python3's, only when the
caller asks for none (wanted False: the user's sys.excepthook reported the
error, or the report is not one that has them).
"""

import _thread
import builtins
import sys

_core = globals()["_core"]
_V = sys.version_info[:2]
_cprint = _core._module("cprint")

_MARK = "\x00evalhost-hint\x00"
_SUGGESTS = (AttributeError, NameError, ImportError) if _V >= (3, 12) else (AttributeError, NameError)
_GROUP = getattr(builtins, "BaseExceptionGroup", ())  # 3.11+
_WIDTH, _DEPTH = 15, 10  # python3's printer's max_group_width and max_group_depth
# the slots the traceback module reads its suggestion from (3.12+)
_SLOTS = [vars(NameError)["name"], vars(AttributeError)["name"]]
if _V >= (3, 12):
    _SLOTS.append(vars(ImportError)["name_from"])


def make(build, exc, wanted=True):
    """build() (a TracebackException of exc, which has its traceback
    module's suggestions, 3.12+), with python3's suggestion on the last line
    of each exception it shows when wanted, with none when not."""
    held = _hold(exc, set(), []) if _V >= (3, 12) else ()
    try:
        te = _with_names(build, held) if held else build()
    finally:
        for slot, e, value in held:
            slot.__set__(e, value)
    if wanted and _V < (3, 13):
        for t, e in _shown(te, exc, 0, set()):
            try:
                text = _suggestion(e)
            except Exception:  # the traceback goes out without it
                text = None
            if text:
                _append(t, text)
    return te


def _hold(exc, seen, held):
    """Set to None each name the traceback module would suggest from, in
    exc and every exception it chains; what was set, to put back."""
    if exc is None or id(exc) in seen:
        return held
    seen.add(id(exc))
    for slot in _SLOTS:
        # its type, as the traceback module asks (not a __class__ that lies)
        if issubclass(type(exc), slot.__objclass__):
            value = slot.__get__(exc)
            if value is not None:
                slot.__set__(exc, None)
                held.append((slot, exc, value))
    _hold(exc.__cause__, seen, held)
    _hold(exc.__context__, seen, held)
    for sub in exc.exceptions if issubclass(type(exc), _GROUP) else ():
        _hold(sub, seen, held)
    return held


def _with_names(build, held):
    """build() with the held names back in their exceptions while the
    traceback maker (printer.py) takes str() of one (before it would
    suggest): a subclass's __str__ that reads self.name gets it, called
    once. Another thread's formatting meanwhile is left alone."""
    printer = _core._module("printer")
    ident, names = _thread.get_ident(), {}
    for slot, e, value in held:
        names.setdefault(id(e), []).append((slot, e, value))

    def around(value, func):
        mine = names.get(id(value)) if _thread.get_ident() == ident else None
        if not mine or mine[0][1] is not value:
            return func(value)
        for slot, e, name in mine:
            slot.__set__(e, name)
        try:
            return func(value)
        finally:
            for slot, e, name in mine:
                slot.__set__(e, None)

    printer.around = around
    try:
        return build()
    finally:
        if printer.around is around:
            printer.around = None


def _shown(te, exc, depth, seen):
    """(TracebackException, exception) for each exception the format of te
    shows: its chain as TracebackException.format follows it, the members of
    a group up to python3's printer's width and depth."""
    while te is not None and exc is not None and id(te) not in seen:
        seen.add(id(te))
        yield te, exc
        subs = getattr(te, "exceptions", None)
        if subs and depth < _DEPTH:
            for t, e in list(zip(subs, exc.exceptions))[:_WIDTH]:
                yield from _shown(t, e, depth + 1, seen)
        if te.__cause__ is not None:
            te, exc = te.__cause__, exc.__cause__
        elif te.__context__ is not None and not te.__suppress_context__:
            te, exc = te.__context__, exc.__context__
        else:
            return


def _suggestion(exc):
    """What python3's printer adds to exc's last line ('. Did you mean:
    'print'?'), or None."""
    stand_in = _stand_in(exc)
    if stand_in is None:
        return None
    parts = _cprint.printed(stand_in)
    if not parts or _MARK not in parts:
        return None
    after = parts[len(parts) - parts[::-1].index(_MARK):]
    if not after or after[-1] != "\n":
        return None
    after.pop()
    n = 1 if _V >= (3, 12) else 3  # 3.10-3.11: ". Did you mean: '", the name, "'?"
    text = None
    if len(after) >= n and after[-n].startswith(". Did you "):
        text = "".join(after[-n:])
        del after[-n:]
    if after:  # the cell's code wrote them while the printer asked it
        _write(after)
    return text


def _stand_in(exc):
    """An exception of exc's type holding only what python3's printer
    reads for exc's suggestion, or None where it has none to make."""
    kind = type(exc)
    if kind not in _SUGGESTS:
        return None
    if kind is ImportError:
        name, module = exc.name_from, exc.name
        if type(name) is not str or type(module) is not str:
            return None
        stand_in = ImportError(_MARK, name=module)
        stand_in.name_from = name
        return stand_in
    name = exc.name
    if type(name) is not str:
        return None
    if kind is AttributeError:
        return AttributeError(_MARK, name=name, obj=exc.obj)
    tb = exc.__traceback__
    if tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    stand_in = NameError(_MARK, name=name)
    stand_in.__traceback__ = type(tb)(None, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
    return stand_in


def _append(te, text):
    """text at the end of te's last line, before its notes (3.11), as
    python3's printer puts it: after the message, or the type alone when
    the message is empty ("AttributeError. Did you mean: 'x'?")."""
    plain = te.format_exception_only

    def format_exception_only(*args, **kwargs):
        lines = iter(plain(*args, **kwargs))
        for first in lines:
            yield first[:-1] + text + "\n" if first.endswith("\n") else first + text
            break
        yield from lines

    te.format_exception_only = format_exception_only


def _write(parts):
    err = sys.stderr
    if err is None:
        return
    try:
        for s in parts:
            err.write(s)
    except Exception:
        pass
