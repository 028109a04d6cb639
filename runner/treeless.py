"""evalhost treeless: a runner's first cell compiled before the interpreter
has built its syntax-tree types (cells._compile calls cell or script once).
"""

import _signal
import _thread
import _warnings
import sys

# The builtin compile() builds the interpreter's syntax-tree types the first
# time it is called, whatever it compiles (PyAST_Check of its argument): 1.8
# to 2.3 ms here, a tenth of a venv's `python -c pass`, which a one-shot run
# pays on its only cell (issue 16). exec and eval of a string compile
# without them. So the first cell (a one-shot run's usual only one) is
# compiled by exec/eval under a trace function that takes the new frame's
# code at its call event, before its first instruction, and stops it
# there. The last statement is found without a tree: it begins at the last
# line at column 0 that is no blank or comment, when what comes before that
# line compiles alone (so no bracket, string or backslash runs on into it),
# and it is an expression when the rest compiles as one (or, with a starred
# item, in brackets).
# Anything else (a ';' from that line on, a form feed, a __future__ import,
# top-level await, a syntax error, a compile-time warning, a tracer, a call
# from inside a tracer's or profiler's callback, where the trace sees no
# calls, an audit hook that refuses the trace, code nested deeper than the
# recursion limit, a thread of the cells' own) goes to compile().
# An error a signal handler raised meanwhile is the cell's, as it would be
# from compile(), wherever it landed: in an audit hook too, whose own error
# (for sys.settrace, or exec of "<string>" code, which compile() does not
# do) sends the cell to compile(); the handler's frame tells them apart.


class _OfString:
    """A warnings filter's module that matches "<string>" alone, exec's
    filename, so other threads' and signal handlers' warnings (of their
    globals' __name__) are left alone. Not a plain string: 3.15 matches one
    to a warning's module only, and the compiler's have none (their
    filename is matched, with the pattern's match as a regex's)."""

    def match(self, s, *pos):
        return True if s == "<string>" and not pos else None


_STOP_WARNINGS = ("error", None, Warning, _OfString(), 0)


class _Taken(Exception):
    """Stops a frame at its call event, its code taken."""


def _treeless_refused(src):
    """What goes to compile() whatever the cell (see above)."""
    # 2 threads: the flusher and the warm-up; more are the cells'. A form
    # feed moves a line to column 0.
    return "\r" in src or "\f" in src or "__future__" in src or sys.gettrace() is not None or _thread._count() > 2


def cell(src, name):
    """(body, last) for cells._compile, or None when compile() must say."""
    if _treeless_refused(src):
        return None
    lines = src.split("\n")
    j = len(lines) - 1  # the last line at column 0 that is not blank or a comment
    while j >= 0 and lines[j][:1] in ("", " ", "\t", "#"):
        j -= 1
    if j < 0 or any(";" in line for line in lines[j:]):
        return None if j >= 0 else _whole(src, name)
    body = None
    if j > 0:
        body = _treeless_code("\n".join(lines[:j]) + "\n", name, "exec", 0)
        if body is None:
            return None
    tail = "\n".join(lines[j:])
    last = _treeless_code(tail, name, "eval", j)
    if last is not None:
        return body, last
    whole = _whole(src, name)
    if whole is None or "*" not in tail or "\n" not in src.rstrip():
        return whole  # one line: compile() too tries it as an expression only as it stands
    # A starred item (`*a, b`) makes an expression statement that is no eval
    # input; in brackets it is one. The whole cell compiled, so the tail is one
    # statement, and in brackets it compiles only when it is an expression.
    if j == 0:
        return None
    last = _treeless_code("(\n" + tail + "\n)", name, "eval", j - 1)
    return (body, last) if last is not None else whole


def script(src, name):
    """(body, None) of a script cell for cells._compile, or None when compile()
    must say: no last statement to find."""
    return None if _treeless_refused(src) else _whole(src, name)


def _whole(src, name):
    body = _treeless_code(src, name, "exec", 0)
    return None if body is None else (body, None)


def _probe():
    """Called under the trace before exec: its call event says the trace
    sees calls, which it does not in a tracer's or profiler's own callback."""


def _warnings_filters():
    """The list the warnings machinery reads: warnings.filters once warnings
    is imported (a cell may have replaced it), else _warnings' own."""
    filters = getattr(sys.modules.get("warnings"), "filters", None)
    return filters if isinstance(filters, list) else _warnings.filters


def _unfilter(filters):
    for i, f in enumerate(filters):  # by identity: a cell's own ("error", ...) is equal
        if f is _STOP_WARNINGS:
            del filters[i]
            return


def _treeless_code(src, name, mode, shift):
    """compile(src, name, mode) with its lines moved down by shift, or None
    for what compile() must report: a compile-time warning is an error here
    (it would name "<string>"), so compile() warns of it, once.

    What Python code runs meanwhile (a signal handler, an audit hook) may
    raise: that goes to the cell as it would from compile(), and neither the
    trace nor the warning filter outlives this call."""
    taken = []

    def take(frame, event, arg):
        code = frame.f_code
        # an audit hook's frame may come first; the code's own is exec's
        # (found without sys._getframe, which an audit hook may refuse)
        back = frame.f_back
        if back is not None and back.f_code is _TREELESS and code.co_filename == "<string>" and code.co_name == "<module>":
            taken.append(code)
            raise _Taken
        if code is _PROBE:
            taken.append(None)
        return None

    filters = _warnings_filters()
    stage = 0
    try:
        filters.insert(0, _STOP_WARNINGS)
        stage = 1
        sys.settrace(take)
        stage = 2
        _probe()
        if not taken:
            return None  # no call events here: exec would run the code
        stage = 3
        (exec if mode == "exec" else eval)(src, {})
    except _Taken:
        pass
    except Exception as e:
        if stage == 1 and sys.gettrace() is not take:
            stage = 0  # no trace to remove
            if _by_handler(e):
                raise  # a signal handler's, raised in an audit hook
            return None  # an audit hook refused sys.settrace: compile() needs none
        if stage < 3 or len(taken) > 1:
            raise  # a signal handler's, say: the cell's, as it would be from compile()
        if e.__traceback__.tb_next is not None and _cells_error(e, take.__code__):
            raise
        # The compiler's error, or an audit hook's that exec called:
        # compile() says what becomes of the cell.
        return None
    finally:
        # No call before the filter is gone: an interrupt lands at a call's end.
        try:
            if filters and filters[0] is _STOP_WARNINGS:
                del filters[0]
            else:
                _unfilter(filters)
        finally:
            if stage:
                sys.settrace(None)  # which _compile does again when this fails
    if len(taken) < 2:
        return None
    try:
        return _renamed(taken[1], name, shift)
    except RecursionError:  # code nested deeper than Python calls may go
        return None


def _cells_error(e, take):
    """Whether e, raised by exec in _treeless_code after Python code ran
    (take the code of its trace function), is the cell's error, raised as it
    would be from compile(): a signal handler's, wherever it landed, or an
    interrupt's as the code's frame started (an async exception's), not an
    audit hook's own or the compiler's."""
    if _by_handler(e):
        return True
    if isinstance(e, RecursionError):
        return False  # a call of the trace function deeper than the limit: compile() makes none
    code = e.__traceback__.tb_next.tb_frame.f_code
    return code is take or (code.co_filename == "<string>" and code.co_name == "<module>")


def _by_handler(e):
    """Whether e went through a frame of a Python signal handler (a
    function, a method, a partial of one or a callable object's __call__),
    wherever it landed: in an audit hook too, whose own error is a refusal
    of what only the treeless compile does (sys.settrace, exec of "<string>"
    code), but this one is the cell's, as it would be from compile()."""
    tb = e.__traceback__.tb_next  # past _treeless_code's frame
    if tb is None:
        return False  # raised where no Python code ran: the compiler's, say
    partial = getattr(sys.modules.get("functools"), "partial", None)
    codes = set()
    for sig in _signal.valid_signals():
        h = _signal.getsignal(sig)
        if partial is not None and isinstance(h, partial):
            h = h.func
        if type(h) is _MethodType:
            h = h.__func__
        elif type(h) is not _FunctionType:
            h = getattr(type(h), "__call__", None)
        if type(h) is _FunctionType:
            codes.add(h.__code__)
    while tb is not None:
        if tb.tb_frame.f_code in codes:
            return True
        tb = tb.tb_next
    return False


def _renamed(code, name, shift):
    """code and the code objects in it under the cell's name, shift lines down."""
    consts = code.co_consts
    if any(type(c) is _CodeType for c in consts):
        consts = tuple(_renamed(c, name, shift) if type(c) is _CodeType else c for c in consts)
    return code.replace(co_filename=name, co_firstlineno=code.co_firstlineno + shift, co_consts=consts)


_CodeType = type(_renamed.__code__)
_FunctionType = type(_renamed)
_MethodType = type(_renamed.__get__(0))
_PROBE = _probe.__code__
_TREELESS = _treeless_code.__code__
