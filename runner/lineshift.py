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
- a nested code object's first line (every line of a code object is
  counted from its co_firstlineno);
- the cell's own code objects (its body, its last expression) begin on
  line 1 from 3.10, as a padded cell's and python3's module do (a
  tracer's call event, dis and co_lines show it): their line table is
  moved instead, at its step into the cell's lines (3.11+: from the
  prologue's line 0; a coroutine's start before it stays on line 1);
- what it warned of: the C warning machinery, having applied the
  filters, shows a warning through warnings._showwarnmsg, which this
  replaces for the compile; a warning of the cell's file from this
  thread is shown at its moved line, any other passes as it came.
What cannot be moved is compiled again, padded, the warnings of that
compile not shown (the first compile showed them, moved):
- a SyntaxError (a warning an 'error' filter made one too): its message
  may name lines ("detected at line N", "on line N"), its text and caret
  come from the line the compiler read back from the file, at the line
  it had not moved, and 3.9-3.11 show an f-string's expression instead;
- 3.13+: a class, whose body stores its first line, a constant, as
  __firstlineno__ (which inspect.getsource reads);
- a line table of a shape this does not know.
A filter naming a line (-W ignore::SyntaxWarning::12) is matched before
a warning is shown, against the line the compiler gave: with one, and on
an interpreter without code.replace or warnings._showwarnmsg, the cell
is padded (move returns None), and so is one on an interpreter newer than
_CHECKED.
Where the code object cannot tell, moved differs from padded: 3.8 and
3.9 begin a padded cell's code on line 1 when its first statement makes
no code (pass, global, while: moved, on that statement's line), 3.10
keeps the implicit return of a cell without statements on line 1
(moved, on the cell's first line).
"""

import _thread
import sys

_core = globals()["_core"]


class _Unmovable(Exception):
    """What the compile made cannot be moved: pad the cell."""


def move(compile_text, src, name, script, before):
    """compile_text(src, name, script) as though src began on line
    before + 1; None when this interpreter cannot have it moved."""
    warnings = _core._own("warnings")
    show = getattr(warnings, "_showwarnmsg", None)
    if (_VERSION > _CHECKED or show is None or not hasattr(_code_type, "replace")
            or _names_a_line(getattr(warnings, "filters", ()))):
        return None
    mover = _Mover(name, before, show)
    warnings._showwarnmsg = mover.show
    try:
        try:
            body, last = compile_text(src, name, script)
            return _moved(body, before, True), _moved(last, before, True)
        except (SyntaxError, _Unmovable):
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


def _moved(code, before, top=False):
    if code is None:
        return None
    consts = code.co_consts
    if any(type(c) is _code_type for c in consts):
        consts = tuple(_moved(c, before) if type(c) is _code_type else c for c in consts)
    if top and _VERSION >= (3, 10):
        return code.replace(co_linetable=_top_table(code, before), co_consts=consts)
    if _CLASS_LINE in code.co_names and not top:
        raise _Unmovable
    return code.replace(co_firstlineno=code.co_firstlineno + before, co_consts=consts)


def _top_table(code, before):
    """The line table of the cell's own code, moved: its first line stays 1."""
    if code.co_firstlineno != 1:
        raise _Unmovable
    if _VERSION < (3, 11):
        return _table_310(code.co_linetable, before)
    table = _table_311(code.co_linetable, before)
    # after the prologue's line 0, the cell's lines only: no step back to 0
    lines = [line for _, _, line in code.co_lines()]
    rest = lines[lines.index(0) :]
    cell = next((i for i, line in enumerate(rest) if line), len(rest))
    if 0 in rest[cell:]:
        raise _Unmovable
    return table


def _table_310(table, before):
    """3.10's (bytes, lines) steps, the lines a signed byte (-128: none),
    a step of more lines cut into (0, 127)s: its first step to a line
    moved by before, written as the compiler writes one."""
    start, n = 0, len(table)
    while start < n and table[start + 1] == 0x80:
        start += 2
    if start == n:
        return table
    lines, i = before, start
    while table[i] == 0 and i + 2 < n and table[i + 3] != 0x80:
        lines += _signed(table[i + 1])
        i += 2
    lines += _signed(table[i + 1])
    cuts = (lines - 1) // 127  # lines > 0: the cell's lines come after the first
    return table[:start] + b"\x00\x7f" * cuts + bytes((table[i], lines - 127 * cuts)) + table[i + 2 :]


def _signed(byte):
    return byte - 256 if byte & 0x80 else byte


def _table_311(table, before):
    """A 3.11+ location table (Objects/locations.md): its step from the
    prologue's line 0 into the cell's lines moved by before (what comes
    before the prologue, a coroutine's start, keeps its line 1). An entry
    is a byte 1CCCCLLL (code C, L+1 code units), then bytes below 0x80:
    codes 0-10 keep the line, 11 and 12 add 1 and 2 (columns in two
    bytes), 13 and 14 a signed varint (14: then end line, column + 1, end
    column + 1 as varints), 15 has none."""
    line, prologue, i, n = 1, False, 0, len(table)
    while i < n:
        first = table[i]
        code = (first >> 3) & 15
        if code in (13, 14):
            step, k = _read_svarint(table, i + 1)
        else:
            step, k = (code - 10 if code in (11, 12) else 0), i + 1
        j = k
        while j < n and table[j] < 0x80:
            j += 1
        if line + step < 1:
            prologue = True
        elif prologue and line < 1:
            if code in (13, 14):
                entry = bytes((first,)) + _svarint(step + before) + table[k:j]
            else:  # the long form, its line span 0
                entry = bytes((0xF0 | first & 7,)) + _svarint(step + before) + b"\x00" + _varint(table[i + 1] + 1) + _varint(table[i + 2] + 1)
            return table[:i] + entry + table[j:]
        line += step
        i = j
    if not prologue:
        raise _Unmovable
    return table  # nothing on the cell's lines


def _read_svarint(table, i):
    value, shift = 0, 0
    while True:
        b = table[i]
        i += 1
        value |= (b & 63) << shift
        shift += 6
        if not b & 64:
            break
    return (-(value >> 1) if value & 1 else value >> 1), i


def _svarint(value):
    return _varint(((-value) << 1) | 1 if value < 0 else value << 1)


def _varint(value):
    out = bytearray()
    while value >= 64:
        out.append(64 | (value & 63))
        value >>= 6
    out.append(value)
    return bytes(out)


_code_type = type(move.__code__)
_VERSION = sys.version_info[:2]
# The newest interpreter whose moved compile was checked against its padded
# one (every stdlib module's statements as cells, 1,001-20,000 lines down:
# the same code, line tables byte for byte): a newer one may change its
# line table or what a code object stores of its lines, and is padded.
_CHECKED = (3, 13)
# 3.13+: a class body stores its first line, a constant, as __firstlineno__
_CLASS_LINE = "__firstlineno__" if _VERSION >= (3, 13) else None
