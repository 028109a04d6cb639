"""evalhost shell escapes: !cmd, x = !cmd, !!cmd and what %sx, %pip and the
shell cell magics run on. Loaded by the first of them; a cell holding only
shell escapes loads this and the rewriter, nothing else.

Commands run through /bin/sh in the runner's process group (the host's
SIGINT reaches them); after an interrupt the child and what it started are
ended and reaped before the KeyboardInterrupt goes on. {expr} and $name
expand as in IPython.
"""

import os

_core = globals()["_core"]
_wire = _core._wire
re = _core._own("re")


# --- variable expansion ---------------------------------------------------


def _namespace(frame):
    if frame is None:
        return _core._ns
    if frame.f_locals is frame.f_globals:
        return frame.f_globals
    ns = dict(frame.f_globals)
    ns.update(frame.f_locals)
    return ns


def expand(cmd, frame):
    """IPython's expansion in shell commands: {expr}, $name, $$ and {{ }} literals.

    A {expr} that fails to evaluate and a $name that is not defined are left
    as written, so shell syntax like ${HOME} and awk '{print $1}' passes through.
    """
    if "$" not in cmd and "{" not in cmd and "}" not in cmd:
        return cmd
    ns = _namespace(frame)
    out, i, n = [], 0, len(cmd)
    while i < n:
        c = cmd[i]
        if c == "$":
            if cmd.startswith("$$", i):
                out.append("$")
                i += 2
                continue
            m = re.match(r"[A-Za-z_]\w*", cmd[i + 1:])
            if m and m.group() in ns:
                out.append(str(ns[m.group()]))
                i += 1 + m.end()
                continue
            out.append(c)
            i += 1
        elif c in "{}" and cmd.startswith(c * 2, i):
            out.append(c)
            i += 2
        elif c == "{":
            j, depth = i + 1, 1
            while j < n and depth:
                depth += {"{": 1, "}": -1}.get(cmd[j], 0)
                j += 1
            expr = cmd[i + 1: j - 1]
            try:
                out.append(str(eval(expr, ns)) if depth == 0 and expr.strip() else cmd[i:j])
            except Exception:
                out.append(cmd[i:j])
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


# --- shell escapes --------------------------------------------------------


def _descendants(pid):
    """The live descendants of pid, read from /proc."""
    kids = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, "rb") as f:
                stat = f.read()
            ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(name))
    out, todo = [], [pid]
    while todo:
        for c in kids.get(todo.pop(), ()):
            out.append(c)
            todo.append(c)
    return out


def _reap(p):
    """Stop and wait for a child after an interrupt; SIGINT held off meanwhile."""
    import _signal

    subprocess = _core._own("subprocess")

    old = _signal.pthread_sigmask(_signal.SIG_BLOCK, (_signal.SIGINT,))
    try:
        # The child shares the runner's process group, so the host's SIGINT reached it too.
        # One that outlives it (a shell waiting for a command started just after the
        # SIGINT, or one that ignores it) is ended with what it started, which would
        # otherwise run on, orphaned, holding the cell's output.
        for action, sig in ((None, 0), (p.terminate, _signal.SIGTERM), (p.kill, _signal.SIGKILL)):
            if action is not None:
                for d in _descendants(p.pid):
                    try:
                        os.kill(d, sig)
                    except OSError:
                        pass
                try:
                    action()
                except OSError:
                    pass
            try:
                p.wait(0.5 if action is None else 1.0)
                return
            except subprocess.TimeoutExpired:
                pass
    finally:
        _signal.pthread_sigmask(_signal.SIG_SETMASK, old)


def run_process(argv, capture=False, stdin_data=None):
    """Run argv with fd 1/2 shared (or stdout captured, stderr merged); return (rc, text)."""
    subprocess = _core._own("subprocess")

    _core._flush_std()
    kw = {}
    if capture:
        kw = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT}
    if stdin_data is not None:
        kw["stdin"] = subprocess.PIPE
        stdin_data = stdin_data.encode()
    # A KeyboardInterrupt raised inside Popen, after the fork, would leave
    # the child running with no handle to reap it: the handler defers it
    # until p exists, and it is raised where p is reaped.
    cell = _wire._cur
    cell.deferring = True
    try:
        p = subprocess.Popen(argv, **kw)
    except BaseException:
        cell.deferring = False
        if cell.deferred:
            cell.deferred = False
            raise KeyboardInterrupt  # the interrupt, which Popen's own error only followed
        raise
    try:
        cell.deferring = False
        if cell.deferred:
            cell.deferred = False
            raise KeyboardInterrupt
        out, _ = p.communicate(stdin_data)
    except BaseException:
        _reap(p)
        raise
    return p.returncode, (out or b"").decode("utf-8", "replace")


def _set_exit_code(rc):
    _core._ns["_exit_code"] = rc


def system(cmd, frame=None):
    """!cmd: run through /bin/sh, output straight to the cell's stdout/stderr."""
    rc, _ = run_process(["/bin/sh", "-c", cmd])
    _set_exit_code(rc)
    return None


def getoutput(cmd, split=True):
    """x = !cmd: the command's output (stderr merged) as an SList of lines."""
    rc, out = run_process(["/bin/sh", "-c", cmd], capture=True)
    _set_exit_code(rc)
    return SList(out.splitlines()) if split else out


class SList(list):
    """A list of output lines, like IPython's: .s (space-joined), .n (newline-joined), .l, .p, grep()."""

    @property
    def s(self):
        return " ".join(self)

    spstr = s

    @property
    def n(self):
        return "\n".join(self)

    nlstr = n

    @property
    def l(self):  # noqa: E743
        return list(self)

    list = l

    @property
    def p(self):
        Path = _core._own("pathlib").Path
        return [Path(x) for x in self if os.path.exists(x)]

    paths = p

    def grep(self, pattern, prune=False, field=None):
        """Lines matching the regex pattern (or not matching, with prune=True)."""
        rx = re.compile(pattern) if isinstance(pattern, str) else None
        keep = (lambda s: bool(rx.search(s))) if rx else pattern
        pick = (lambda s: s.split()[field] if len(s.split()) > field else "") if field is not None else (lambda s: s)
        return SList(x for x in self if keep(pick(x)) != prune)

    def fields(self, *idx):
        """Whitespace-separated fields of each line; one index gives strings, several give joined strings."""
        res = SList()
        for line in self:
            parts = line.split()
            if not idx:
                res.append(parts)
                continue
            res.append(" ".join(parts[i] for i in idx if -len(parts) <= i < len(parts)))
        return res
