"""A cell far down its file, compiled where it stands and moved to its lines.

A cell from a file compiles under the file's name with the file's line
numbers (tracebacks, warnings, inspect, SyntaxErrors say FILE:LINE as
python3's do). cells.py gets them by padding the cell with a newline for
each line of the file before it, which the compiler reads at ~15 ns a
line: a file's every cell paid for the file above it, quadratic over a
long one (20,000 two-line cells: 0.6 ms a cell at the end). A cell more
than cells._PAD_LINES down is compiled as it stands, and what the
compiler made or said is moved down by the lines before it, to be what
the padded compile makes or says:
- its code objects' first lines (every line of a code object is counted
  from its co_firstlineno, nested ones' too);
- what it warned of: the C warning machinery, having applied the
  filters, shows a warning through warnings._showwarnmsg, which this
  replaces for the compile; a warning of the cell's file from this
  thread is shown at its moved line, any other passes as it came.
What cannot be moved is compiled again, padded, the warnings of that
compile not shown (the first compile showed them, moved): a SyntaxError
(a warning an 'error' filter made one too), whose message may name lines
("detected at line N", "on line N"), whose text and caret come from the
line the compiler read back from the file, at the line it had not moved,
and which 3.9-3.11 show an f-string's expression in.
A filter naming a line (-W ignore::SyntaxWarning::12) is matched before
a warning is shown, against the line the compiler gave: with one, and on
an interpreter without code.replace or warnings._showwarnmsg, the cell
is padded (move returns None).
"""

import _thread

_core = globals()["_core"]


def move(compile_text, src, name, script, before):
    """compile_text(src, name, script) as though src began on line
    before + 1; None when this interpreter cannot have it moved."""
    warnings = _core._own("warnings")
    show = getattr(warnings, "_showwarnmsg", None)
    if show is None or not hasattr(_code_type, "replace") or _names_a_line(getattr(warnings, "filters", ())):
        return None
    mover = _Mover(name, before, show)
    warnings._showwarnmsg = mover.show
    try:
        try:
            body, last = compile_text(src, name, script)
            return _moved(body, before), _moved(last, before)
        except SyntaxError:
            pass
        mover.quiet = True
        return compile_text("\n" * before + src, name, script)
    finally:
        if warnings._showwarnmsg == mover.show:
            warnings._showwarnmsg = show


def _names_a_line(filters):
    for f in filters:
        if type(f) is not tuple or len(f) != 5 or f[4]:
            return True
    return False


class _Mover:
    """The compile's warnings, moved down by before lines."""

    def __init__(self, name, before, show):
        self.name = name
        self.before = before
        self.shown = show
        self.thread = _thread.get_ident()
        self.quiet = False  # the padded compile's: shown already

    def show(self, msg):
        if msg.filename == self.name and _thread.get_ident() == self.thread and type(msg.lineno) is int:
            if self.quiet:
                return
            msg.lineno += self.before
        self.shown(msg)


def _moved(code, before):
    if code is None:
        return None
    consts = code.co_consts
    if any(type(c) is _code_type for c in consts):
        consts = tuple(_moved(c, before) if type(c) is _code_type else c for c in consts)
    return code.replace(co_firstlineno=code.co_firstlineno + before, co_consts=consts)


_code_type = type(move.__code__)
