"""evalhost asfile: a script's compile error as python3 FILE's. Loaded by
cells on a compile error of one of a script's cells, never on the normal
path.

python3 FILE parses the file through the C tokenizer's file mode, the
runner compiles the text it was sent (string mode), and the two differ:

- A NUL byte. 3.12+ (and the 3.11s whose compile() says SyntaxError):
  python3's is "source code cannot contain null bytes" at the line of the
  first NUL, its text that line up to the NUL, offset 0, whatever comes
  before; compile()'s has no place. Before (compile() raises ValueError):
  the file mode's fgets-and-strchr reading drops what follows a NUL on its
  line, the newline too, so that line runs on into the next, as one line
  (later ones are numbered one less); such a script may even run.
- 3.8 and 3.9 at the end of the file: each read past the end counts a
  line, so "unexpected EOF while parsing" (and 3.9's "expected an indented
  block" there) names the line after the last (two after a backslash
  continuation), with no text; an unterminated triple-quoted string two
  after the last line (one when the file does not end in a newline), with
  the string's lines as its text.
- 3.9's parser (3.10's for its own errors, whose text ends in a newline:
  the tokenizer's do not) reads an error's text back from the file by its
  line number: the physical line, cut at a NUL; a line past the file's
  end (or 3.9's <stdin>, which it cannot open), the tokenizer's buffer.
  3.10's finds <stdin>'s line in what it read of it: the physical line,
  cut at a NUL, too.
- 3.10+: an error raised at the end of the file on a token with no place
  (a missing indented block) has offset 0 in file mode, where string mode
  counts to the end of the last line; python3 shows no caret for it.

And python3 shows a SyntaxError with the interpreter's own display (C code
before 3.13): the text stripped of its leading tabs too, its caret placed
and clipped as there, none where the offset is 0 or points left of the
text. display() is that display, run on the error; 3.13's is the traceback
module's, which tracebacks.py uses already.
"""

import sys

_core = globals()["_core"]
_V = sys.version_info[:2]
_NUL = "source code string cannot contain null bytes"
_EOF = "unexpected EOF while parsing"
_EOFS = "EOF while scanning triple-quoted string literal"
# Raised by the tokenizer with the line read, in file mode as in string mode
_TOKENIZER_ENDS = ("unindent does not match any outer indentation level",
                   "inconsistent use of tabs and spaces in indentation")


def recompile(e, src, name, compile_text):
    """The code python3 FILE would run for src (a script's whole text,
    compiled as name), or raise the error its compile raises; e is what
    compile_text(src) raised."""
    if _is_nul(e):
        if isinstance(e, SyntaxError):  # 3.12+: the file mode says where
            raise _nul_error(src, name) from None
        joined = _join_nul_lines(src)
        try:
            return compile_text(joined)
        except SyntaxError as j:
            raise _as_file(j, src, joined) from None
    if isinstance(e, SyntaxError):
        raise _as_file(e, src, src) from None
    raise e


def _is_nul(e):
    return type(e) in (ValueError, SyntaxError) and e.args[:1] == (_NUL,) and getattr(e, "lineno", None) is None


def _nul_error(src, name):
    at = src.index("\0")
    start = src.rfind("\n", 0, at) + 1
    line = src.count("\n", 0, at) + 1
    return SyntaxError("source code cannot contain null bytes", (name, line, 0, src[start:at], line, 0))


def _join_nul_lines(src):
    """src as the file mode's reading sees it before 3.11: from each NUL to
    the end of its line, its newline too, is gone."""
    out, i = [], 0
    while True:
        at = src.find("\0", i)
        if at < 0:
            out.append(src[i:])
            return "".join(out)
        out.append(src[i:at])
        end = src.find("\n", at)
        if end < 0:
            return "".join(out)
        i = end + 1


def _as_file(e, src, parsed):
    """e, raised compiling parsed (src, NULs joined), as python3's compile
    of the file src raises it."""
    lineno, offset, text = e.lineno, e.offset, e.text
    if type(lineno) is not int:
        return e
    end = _end(e)
    lines = parsed.count("\n") + (0 if parsed.endswith("\n") else 1)
    # the interpreter reads the line back by the file's name: not <stdin>'s,
    # but 3.10's parser finds it in what it read of stdin, cut at the NUL too
    reread = parsed is not src and (not (e.filename or "<").startswith("<") or
                                    _V == (3, 10) and e.filename == "<stdin>")
    if _V < (3, 10) and e.msg == _EOFS:
        lineno += 2 if parsed.endswith("\n") else 1
        if _V == (3, 9):
            text = _string_lines(parsed, text)
        reread = False  # past the end: the tokenizer's buffer
    elif _V < (3, 10) and (e.msg == _EOF or _V == (3, 9) and e.msg == "expected an indented block" and
                           lineno == lines and _at_line_end(text, offset)):
        if text is not None and text.rstrip("\n").endswith("\\"):
            lineno += 2  # the backslash's line is the text
        else:
            lineno, text = lineno + 1, ""
        reread = reread and _V == (3, 9)
    elif _V >= (3, 10) and end == (lineno, -1) and lineno == lines and _at_line_end(text, offset) and \
            e.msg not in _TOKENIZER_ENDS:
        offset = 0
    if reread and (_V == (3, 9) or _V == (3, 10) and (text or "").endswith("\n")):
        text = _physical_line(src, lineno, text)
    if (lineno, offset, text) == (e.lineno, e.offset, e.text):
        return e
    args = (e.filename, lineno, offset, text) + ((end[0], end[1]) if end is not None else ())
    return type(e)(e.msg, args)


def _at_line_end(text, offset):
    """Whether offset is past the whole of text (its newline too), where a
    token with no place at the end of the file puts it: not a backslash
    continuation's, which the tokenizer raises with the line still read."""
    if type(text) is not str or type(offset) is not int or text.rstrip("\n").endswith("\\"):
        return False
    return offset >= len(text.rstrip("\n")) + 1


def _physical_line(src, lineno, text):
    """Line lineno of the file src as the interpreter reads it back for an
    error (err_programtext): cut at a NUL; text when the file is shorter."""
    lines = src.split("\n")
    if lines[-1] == "":
        lines.pop()
    if lineno > len(lines):
        return text
    line = lines[lineno - 1]
    if "\0" in line:
        return line[:line.index("\0")]
    return line + "\n" if lineno < len(lines) or src.endswith("\n") else line


def _end(e):
    if _V < (3, 10):
        return None
    return (getattr(e, "end_lineno", None), getattr(e, "end_offset", None))


def _string_lines(src, text):
    """3.9's text for an unterminated triple-quoted string: its lines, from
    the one it starts on, as 3.8's compile gives them."""
    tokenize = _core._own("tokenize")
    io = _core._own("io")
    try:
        for _ in tokenize.generate_tokens(io.StringIO(src).readline):
            pass
    except tokenize.TokenError as t:
        start = t.args[1][0] if len(t.args) > 1 and type(t.args[1]) is tuple else None
        if type(start) is int:
            rest = "".join(src.splitlines(True)[start - 1:])
            return rest if rest.endswith("\n") else rest + "\n"
    except Exception:
        pass
    return text


# --- python3's display of a SyntaxError ------------------------------------


def display(e):
    """python3's display of the SyntaxError e as lines, or None where the
    traceback module's is python3's (3.13+) or the interpreter's own
    display is gone."""
    if _V >= (3, 13) or not isinstance(e, SyntaxError):
        return None
    # python3's has no traceback (the compile ran no frame) nor context
    e.__traceback__ = e.__context__ = e.__cause__ = None
    parts = _core._module("cprint").printed(e)
    text = "".join(parts or ())
    return text.rstrip("\n").split("\n") if text else None
