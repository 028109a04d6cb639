"""A cell far down its file, compiled where it stands and moved to its lines.

A cell from a file compiles under the file's name with the file's line
numbers (tracebacks, warnings, inspect, SyntaxErrors say FILE:LINE as
python3's do). cells.py gets them by padding the cell with a newline for
each line of the file before it, which the compiler reads at ~15 ns a
line: a file's every cell paid for the file above it, quadratic over a
long one (20,000 two-line cells: 0.6 ms a cell at the end). A cell more
than cells._PAD_LINES down is compiled as it stands, and what the
compiler made or said is moved down by the lines before it:
- its code objects' first lines (every line of a code object is counted
  from its co_firstlineno, nested ones' too);
- a SyntaxError's lines (a warning an 'error' filter made one included);
- what it warned of: the C warning machinery, having applied the
  filters, shows a warning through warnings._showwarnmsg, which this
  replaces for the compile; a warning of the cell's file from this
  thread is shown at its moved line, any other passes as it came.
An interpreter without code.replace or warnings._showwarnmsg gets the
padding (move returns None).
"""

import _thread

_core = globals()["_core"]


def move(compile_text, src, name, script, before):
    """compile_text(src, name, script) as though src began on line
    before + 1; None when this interpreter cannot have it moved."""
    warnings = _core._own("warnings")
    show = getattr(warnings, "_showwarnmsg", None)
    if show is None or not hasattr(_code_type, "replace"):
        return None
    mover = _Mover(name, before, show)
    warnings._showwarnmsg = mover.show
    try:
        body, last = compile_text(src, name, script)
    except SyntaxError as e:
        mover.move_error(e, src)
        raise
    finally:
        if warnings._showwarnmsg == mover.show:
            warnings._showwarnmsg = show
    return _moved(body, before), _moved(last, before)


class _Mover:
    """The compile's warnings and errors, moved down by before lines."""

    def __init__(self, name, before, show):
        self.name = name
        self.before = before
        self.shown = show
        self.thread = _thread.get_ident()

    def show(self, msg):
        if msg.filename == self.name and _thread.get_ident() == self.thread and type(msg.lineno) is int:
            msg.lineno += self.before
        self.shown(msg)

    def move_error(self, e, src):
        """Move e down, its text the cell's line: the compiler read the
        text from the file named, at the line it had not moved."""
        if e.filename != self.name or type(e.lineno) is not int:
            return
        lines = src.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        if 0 < e.lineno <= len(lines):
            e.text = lines[e.lineno - 1] + "\n"
        e.lineno += self.before
        if type(getattr(e, "end_lineno", None)) is int:
            e.end_lineno += self.before


def _moved(code, before):
    if code is None:
        return None
    consts = code.co_consts
    if any(type(c) is _code_type for c in consts):
        consts = tuple(_moved(c, before) if type(c) is _code_type else c for c in consts)
    return code.replace(co_firstlineno=code.co_firstlineno + before, co_consts=consts)


_code_type = type(move.__code__)
