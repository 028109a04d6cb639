"""evalhost magic rewriter, loaded by core when a cell may hold a magic or
shell escape (a cheap pre-check says so).

transform(src) rewrites them into calls on builtins.__evh__ (installed
here), one line for one line: Python's tokenizer decides which lines are
code, so '%' and '!' in strings, f-strings, modulo and '!=' are never
touched and error line numbers hold. The calls load what they need: a shell
escape only ipy_system, a magic ipy_magics. Nothing of _core is used at
load, so the rewriter also runs on its own (the fuzz test does).
"""

import builtins
import io
import sys

_core = globals().get("_core")
# The runner's own imports (imports.py); alone (the fuzz test), plain ones
_own = _core._own if _core is not None else __import__
re = _own("re")
tokenize = _own("tokenize")


# --- the rewriter ---------------------------------------------------------

_ESCAPE = re.compile(r"^([ \t]*)(%%|%|!!|!)(.*?)(\r?\n)?$", re.S)
_ASSIGN = re.compile(
    r"^([ \t]*)([A-Za-z_][\w.]*(?:\[[^=\]\n]*\])?(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*)[ \t]*=[ \t]*(!|%)(?!=)(.*?)(\r?\n)?$",
    re.S,
)
# IPython's help syntax: a dotted name with ? or ?? before or after it.
_HELP = re.compile(r"^([ \t]*)(\?\??)?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(\?\??)?[ \t]*(\r?\n)?$")
_PLACEHOLDER = "__evh_magic_%d__"
_START = (tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT)


def _continued(lines, i):
    """(line, last index): line i joined with the lines its trailing
    backslashes continue it into, as IPython's assemble_continued_line
    joins a magic's or shell escape's (each backslash and newline a space)."""
    end = i
    while end < len(lines) - 1 and lines[end].endswith("\\\n"):
        end += 1
    if end == i:
        return lines[i], i
    parts = lines[i:end + 1]
    joined = " ".join([p.rstrip()[:-1] for p in parts[:-1]] + [parts[-1].rstrip()])
    return joined + ("\n" if parts[-1].endswith("\n") else ""), end


def _candidates(lines):
    """Lines that would be a magic if they begin a logical line: index ->
    (replacement, index of its last line: a backslash continues a magic)."""
    found = {}
    last = -1
    for i, line in enumerate(lines):
        if i <= last:
            continue  # a line a magic's backslash continued
        end = i
        if line.endswith("\\\n"):
            line, end = _continued(lines, i)
        new = _candidate(line)
        if new is not None:
            found[i] = new, end
            last = end
    return found


def _candidate(line):
    """line rewritten as the magic, escape or help it would be, or None."""
    m = _ESCAPE.match(line)
    if m:
        indent, esc, rest, end = m.groups()
        if esc.startswith("%") and rest[:1] in ("=", " ", ""):
            return None  # '%=' or a lone '%': never a magic, leave it to the compiler
        return indent + _call(esc, rest) + (end or "")
    m = _HELP.match(line)
    if m and bool(m.group(2)) != bool(m.group(4)):  # ?x or x?, not ?x? or x
        indent, pre, name, post, end = m.groups()
        return "%s__evh__.pinfo(%r, %d)%s" % (indent, name, len(pre or post) - 1, end or "")
    m = _ASSIGN.match(line)
    if m:
        indent, lhs, esc, rest, end = m.groups()
        call = _call("!!" if esc == "!" else esc, rest)
        return "%s%s = %s%s" % (indent, lhs, call, end or "")
    return None


def _call(esc, rest):
    if esc == "!":
        return "__evh__.system(%r)" % rest
    if esc == "!!":
        return "__evh__.getoutput(%r)" % rest
    name, _, args = rest.partition(" ")
    if esc == "%%":
        return "__evh__.misplaced_cell_magic(%r)" % name
    return "__evh__.line_magic(%r, %r)" % (name, args.strip())


def _confirmed(lines, cands):
    """Which candidate lines the tokenizer sees as the start of a logical line."""
    work = list(lines)
    for i, (_, end) in cands.items():
        line = lines[i]
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        work[i] = indent + _PLACEHOLDER % i + ("\n" if line.endswith("\n") else "")
        for j in range(i + 1, end + 1):
            work[j] = "\n" if lines[j].endswith("\n") else ""
    names = {_PLACEHOLDER % i: i for i in cands}
    ok = set()
    depth, prev = 0, tokenize.NEWLINE
    try:
        for tok in tokenize.generate_tokens(io.StringIO("".join(work)).readline):
            t = tok.type
            if t == tokenize.OP:
                if tok.string in "([{":
                    depth += 1
                elif tok.string in ")]}":
                    depth = max(depth - 1, 0)
            elif t == tokenize.NAME and tok.string in names and depth == 0 and prev in _START:
                ok.add(names[tok.string])
            if t != tokenize.COMMENT:
                prev = t
    except (tokenize.TokenError, SyntaxError):
        pass  # the compiler reports the real error; lines seen so far are known
    return ok


def transform(src):
    """Rewrite magics and shell escapes in a cell into calls, one line for one line."""
    parts = src.split("\n")  # only "\n" ends a line for the tokenizer, not splitlines' other breaks
    lines = [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
    for i, line in enumerate(lines):
        s = line.strip()
        if not s:
            continue
        if s.startswith("%%") and len(s) > 2 and not s[2] in " =%":
            name, _, args = s[2:].partition(" ")
            body = "".join(lines[i + 1:])
            return "\n" * i + "__evh__.cell_magic(%r, %r, %r, %d)" % (name, args.strip(), body, i + 1)
        break
    cands = _candidates(lines)
    if not cands:
        return src
    for i in _confirmed(lines, cands):
        new, end = cands[i]
        # One line for one line: the lines it continued into are blank (a
        # last one without a newline a comment, so it still counts).
        for j in range(i + 1, end + 1):
            lines[j] = "\n" if lines[j].endswith("\n") else "#"
        if end > i:
            new = new.rstrip("\n") + "\n"
        lines[i] = new
    return "".join(lines)


# --- the entry points the rewritten code calls ---------------------------


class _Entry:
    """builtins.__evh__: what transform() turns magics and escapes into."""

    @staticmethod
    def system(cmd):
        s = _core._module("ipy_system")
        return s.system(s.expand(cmd, sys._getframe(1)))

    @staticmethod
    def getoutput(cmd):
        s = _core._module("ipy_system")
        return s.getoutput(s.expand(cmd, sys._getframe(1)))

    @staticmethod
    def line_magic(name, args):
        return _core._module("ipy_magics").line_magic(name, args, sys._getframe(1))

    @staticmethod
    def cell_magic(name, args, body, offset):
        return _core._module("ipy_magics").cell_magic(name, args, body, offset, sys._getframe(1))

    @staticmethod
    def pinfo(name, detail):
        return _core._module("ipy_help").pinfo(name, detail, sys._getframe(1))

    @staticmethod
    def misplaced_cell_magic(name):
        raise _core._module("ipy_magics").UsageError("cell magic %%%%%s must be on the first line of the cell" % name)


builtins.__evh__ = _Entry
