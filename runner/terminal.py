"""evalhost terminal: a request's terminal, for its cell alone.

EVALHOST_TTY tells an interpreter, as it starts, which of fd 1/2 its host
shows on a terminal (evalhost run in one: stdio.take). A session's
interpreter outlives the command that started it, and each command that
sends it cells has a terminal or not (run --session at one, then piped
into a file): an execute request's "terminal" says so for that cell, and
the cell's end takes it back (enter returns what leave puts back).

What it changes is what EVALHOST_TTY does: the runner's sys.stdout and
sys.stderr of those fds say isatty() true, stdout is line-buffered
(unless it writes through, as python3 -u's, or a cell chose its line
buffering with sys.stdout.reconfigure, which lasts as in one python3
process: stdio.buffering_chosen), 3.13+'s _colorize sees
their pipes as a terminal (stdio.tty_pipes) and a script's error is
coloured as python3's there (stdio.err_shown); and "env" (COLUMNS, LINES,
what decides colours) is set, a variable the cell changed being left as
the cell left it. The cells of one host request (its "request" id) are
one script: a variable one of them changed is not set again for the
later ones, which see the change as a script's later lines do. Loaded by
cells only for a request that has one.
"""

import io
import os
import sys

_core = globals()["_core"]
_stdio = _core._stdio


class BadTerminal(ValueError):
    """A "terminal" that is not one: cells reports it as a RequestError."""


# (request id, the names its cells changed) after a cell of a request with
# an id: its later cells leave those as the earlier ones did.
_changed = (None, frozenset())


def _raw(stream):
    """The FileIO under a runner stream (a BufferedWriter's, or its own
    when it writes through)."""
    b = stream.buffer
    return getattr(b, "raw", b)


def _checked(spec):
    if type(spec) is not dict:
        raise BadTerminal('"terminal" must be an object like {"fds": [1, 2], "env": {"COLUMNS": "80"}}')
    fds = spec.get("fds", [])
    if type(fds) is not list or any(fd not in (1, 2) or type(fd) is not int for fd in fds):
        raise BadTerminal('"terminal.fds" must be an array of 1 and 2')
    env = spec.get("env") or {}
    if type(env) is not dict or any(v is not None and type(v) is not str for v in env.values()):
        raise BadTerminal('"terminal.env" must be an object of names to strings or null')
    request = spec.get("request")
    if request is not None and type(request) is not str:
        raise BadTerminal('"terminal.request" must be a string')
    return fds, env, request


def enter(spec):
    """Apply a request's "terminal" before its cell; returns leave's undo.
    One that cannot be applied is taken back whole, and raises."""
    fds, env, request = _checked(spec)
    # Names an earlier cell of this request changed: they stay as it left them.
    kept = _changed[1] if request is not None and _changed[0] == request else frozenset()
    undo = {"pipes": _stdio.tty_pipes, "err_shown": _stdio.err_shown, "isatty": [], "env": [],
            "request": request, "changed": set(kept)}
    try:
        _enter(fds, env, undo)
    except BaseException:
        leave(undo)
        raise
    return undo


def _enter(fds, env, undo):
    out = _stdio.out
    for fd, stream in ((1, out), (2, _stdio.err)):
        if fd in fds:
            raw = _raw(stream)
            undo["isatty"].append((raw, vars(raw).get("isatty")))
            raw.isatty = _stdio._is_terminal
    # Line-buffered as python3's at a terminal, unless -u made it write
    # through (no buffer under it) or the program chose its own.
    if 1 in fds and not out.line_buffering and not _stdio.buffering_chosen and out.buffer is not _raw(out):
        io.TextIOWrapper.reconfigure(out, line_buffering=True)
        undo["line_buffering"] = out
    _stdio.tty_pipes = frozenset(_stdio._pipe_id(fd) for fd in fds) - {None}
    _stdio.err_shown = 2 in fds
    colorize = sys.modules.get("_colorize")
    if colorize is not None:  # imported before: it learns of the pipes now
        _stdio._fix_colorize(colorize)
    for k, v in env.items():
        if k in undo["changed"]:
            continue
        before = os.environ.get(k)
        try:
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        except ValueError as e:  # a NUL, an "=" in the name
            raise BadTerminal("cannot set %r: %s" % (k, e))
        undo["env"].append((k, before, v))


def leave(undo):
    """Take a cell's terminal back (enter's undo), whatever the cell did."""
    global _changed
    _stdio.tty_pipes, _stdio.err_shown = undo["pipes"], undo["err_shown"]
    for raw, before in undo["isatty"]:
        if before is None:
            vars(raw).pop("isatty", None)
        else:
            raw.isatty = before
    out = undo.get("line_buffering")
    if out is not None and not _stdio.buffering_chosen:  # the cell's choice stays
        try:
            io.TextIOWrapper.reconfigure(out, line_buffering=False)  # flushes first
        except (OSError, ValueError):  # closed, or its fd gone: stays as it is
            pass
    for k, before, v in undo["env"]:
        if os.environ.get(k) != v:
            undo["changed"].add(k)
            continue  # the cell's own value, kept as any change it makes
        if before is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = before
    _changed = (undo["request"], frozenset(undo["changed"]))
