"""evalhost printer: an exception's last line as python3's own report
writes it, and the str() of the exception taken once. Loaded by
tracebacks with the first error it formats.

python3's printer calls str(exc) once per exception it shows; the runner's
traceback (a TracebackException, tracebacks.py) takes it as that does, and
the error frame's evalue is that same text, not a second str() call (a
__str__ with side effects, a counter or a print, runs once, as in python3).
factory gives a TracebackException maker whose __init__ is the traceback
module's own code, run with its own globals but for the function that calls
str() (_some_str; 3.11+ _safe_string) and the name TracebackException (this
maker, for the chained exceptions), so what that str() gave is marked
(_Str: whether it failed; 3.12+, where __init__ adds a suggestion to it,
the text before). The traceback module itself is not changed: a cell
formatting a traceback meanwhile uses it as ever.

3.8-3.10: python3's printer is C code (PyErr_Display), which names the type
on the last line otherwise than the traceback module: the module always,
but "builtins" ("__main__.E: x", where the module says "E: x"), the name
3.8's tp_name has (its last dotted part: __name__), 3.9-3.10's
__qualname__; "<unknown>" for a module that is not a str ("<unknown>E"
3.8, "<unknown>.E" after); and "<exception str() failed>" for a str() that
raised, where the module says "<unprintable E object>". 3.11+ name it as
the module does (python3_names leaves them be).
"""

import sys

_V = sys.version_info[:2]
_FAILED = "<exception str() failed>"
_GROUP = getattr(sys.modules["builtins"], "BaseExceptionGroup", None)  # 3.11+


class _Str(str):
    """str(exc) as a TracebackException took it. failed: str() raised;
    raw: the text before __init__ added a suggestion to it (3.12+)."""

    failed = False

    def __add__(self, other):
        s = _Str(str.__add__(self, other))
        s.failed, s.raw = self.failed, self.raw
        return s


def _taken(text, failed=False):
    s = _Str(text)
    s.failed, s.raw = failed, text
    return s


# An exception whose str() is not called but given (a script's SystemExit,
# whose str() python3 never takes): (exception, text); text None stands
# for a str() that failed.
given = None


def _given(value, failed):
    """The str() given for value, marked as taken (failed: what says it
    failed), or None."""
    if given is None or given[0] is not value:
        return None
    return _taken(given[1]) if given[1] is not None else _taken(failed, True)


def _some_str(value):  # 3.8-3.10's, marking what it took
    g = _given(value, "<unprintable %s object>" % type(value).__name__)
    if g is not None:
        return g
    try:
        return _taken(str(value))
    except BaseException:  # as the module's bare except
        return _taken("<unprintable %s object>" % type(value).__name__, True)


# When set (hints.py, while it holds 3.12+'s suggestion names), how the
# exception's str() is called: around(value, func).
around = None


def _safe_string(value, what, func=str):  # 3.11+'s, marking the exception's str()
    g = _given(value, _FAILED) if what == "exception" and func is str else None
    if g is not None:
        return g
    try:
        s = func(value) if around is None or what != "exception" else around(value, func)
    except BaseException:  # as the module's bare except
        s = "<%s %s() failed>" % (what, func.__name__)
        return _taken(s, True) if what == "exception" else s
    return _taken(s) if what == "exception" and func is str and isinstance(s, str) else s


_made = (None, None)  # (traceback module, its maker): one per module object


def factory(traceback):
    """A callable made as traceback.TracebackException is, whose
    instances' _str is a _Str."""
    global _made
    module, make = _made
    if module is traceback:
        return make
    base = traceback.TracebackException
    init = base.__init__
    scope = dict(vars(traceback))

    def make(*args, **kwargs):
        te = base.__new__(base)
        code(te, *args, **kwargs)
        return te

    scope["TracebackException"] = make
    if "_safe_string" in scope:
        scope["_safe_string"] = _safe_string
    else:
        scope["_some_str"] = _some_str
    code = type(init)(init.__code__, scope, init.__name__, init.__defaults__, init.__closure__)
    code.__kwdefaults__ = init.__kwdefaults__
    _made = (traceback, make)
    return make


def evalue(te, exc):
    """The frame's evalue: the str(exc) te took, without a suggestion;
    "<unprintable E>" when it failed."""
    s = getattr(te, "_str", None)
    if isinstance(s, _Str):
        return "<unprintable %s>" % type(exc).__name__ if s.failed else s.raw
    try:  # a maker that was not ours (none is expected)
        return str(exc)
    except Exception:
        return "<unprintable %s>" % type(exc).__name__


def python3_names(te, exc, script):
    """3.8-3.10, for a script's report: each exception's last line in te
    (its chain) names its type and says a failed str() as python3's C
    printer does (module doc)."""
    if not script or _V >= (3, 11):
        return
    seen = set()
    while te is not None and id(te) not in seen:
        seen.add(id(te))
        _rename(te)
        te = te.__cause__ if te.__cause__ is not None else te.__context__


def _rename(te):
    t = te.exc_type
    if t is None:
        return
    shown, ours = _module_name(t), _c_name(t)
    failed = getattr(te._str, "failed", False)
    if shown == ours and not failed:
        return
    plain = te.format_exception_only
    syntax = issubclass(t, SyntaxError)

    def format_exception_only(*args, **kwargs):
        if not syntax:  # one line, whose type the module may not even format (3.8: a module of None)
            s = _FAILED if failed else te._str
            yield "%s: %s\n" % (ours, s) if s else ours + "\n"
            return
        lines = list(plain(*args, **kwargs))
        if lines and shown is not None and lines[-1].startswith(shown):
            lines[-1] = ours + lines[-1][len(shown):]
        yield from lines

    te.format_exception_only = format_exception_only


def _module_name(t):
    """How 3.8-3.10's traceback module names t; None where it cannot."""
    try:
        name, module = t.__qualname__, t.__module__
        return name if module in ("__main__", "builtins") else module + "." + name
    except Exception:
        return None


def _c_name(t):
    """How 3.8-3.10's C printer names t."""
    try:
        module = t.__module__
    except Exception:
        module = None
    try:
        name = t.__name__ if _V < (3, 9) else t.__qualname__
    except Exception:
        name = "<unknown>"
    if not isinstance(module, str):
        return ("<unknown>" if _V < (3, 9) else "<unknown>.") + name
    return name if module == "builtins" else module + "." + name


def printed_evalue(pieces, exc):
    """str(exc) as 3.8-3.12's C printer wrote it among pieces (one write
    each: the type's last name, then ": " and the text, ": <exception str()
    failed>", or the empty text alone), found from the end (exc's line is
    the last but for its notes), without calling str() again; a group's
    str() is the builtin's, which runs no cell code."""
    kind = type(exc)
    base = _GROUP
    if base is not None and isinstance(exc, base) and kind.__str__ is base.__str__:
        return str(exc)
    try:
        name = kind.__name__ if _V < (3, 9) else kind.__qualname__
    except Exception:
        name = "<unknown>"
    for i in range(len(pieces) - 2, -1, -1):
        if pieces[i] != name:
            continue
        after = pieces[i + 1]
        if after == ": " + _FAILED:
            return "<unprintable %s>" % kind.__name__
        if after == ": " and i + 2 < len(pieces):
            return pieces[i + 2]
        if after == "" and i + 2 < len(pieces) and pieces[i + 2] == "\n":
            return ""
    return ""
