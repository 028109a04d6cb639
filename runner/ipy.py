"""evalhost IPython compatibility, loaded by core.py on first use.

Nothing here runs at start-up: core loads this file when a cell may hold a
magic or shell escape (a cheap pre-check), when code calls get_ipython(), or
when code imports IPython. It provides:
  - transform(src): the magic rewriter. Python's tokenizer decides which
    lines are code, so '%' and '!' in strings, f-strings, modulo and '!=' are
    never touched; each magic line becomes one call line, so line numbers stay.
  - the magics themselves, shell escapes (/bin/sh in the runner's process
    group, interruptible), SList, CapturedIO;
  - get_ipython()'s shell stand-in;
  - the IPython import hook: with IPython installed, its display functions
    are patched (after their module loads) to send runner frames; without it,
    a small IPython / IPython.display shim is served;
  - full IPython mode (EVALHOST_IPYTHON=1): cells run by InteractiveShell.

_core (the runner module) is injected by core before this file runs.
"""

import builtins
import io
import os
import re
import sys
import tokenize

_core = globals()["_core"]

# --- the rewriter ---------------------------------------------------------

_ESCAPE = re.compile(r"^([ \t]*)(%%|%|!!|!)(.*?)(\r?\n)?$", re.S)
_ASSIGN = re.compile(
    r"^([ \t]*)([A-Za-z_][\w.]*(?:\[[^=\]\n]*\])?(?:[ \t]*,[ \t]*[A-Za-z_][\w.]*)*)[ \t]*=[ \t]*(!|%)(?!=)(.*?)(\r?\n)?$",
    re.S,
)
_PLACEHOLDER = "__evh_magic_%d__"
_START = (tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT)


def _candidates(lines):
    """Lines that would be a magic if they begin a logical line: index -> replacement."""
    found = {}
    for i, line in enumerate(lines):
        m = _ESCAPE.match(line)
        if m:
            indent, esc, rest, end = m.groups()
            if esc.startswith("%") and rest[:1] in ("=", " ", ""):
                continue  # '%=' or a lone '%': never a magic, leave it to the compiler
            found[i] = indent + _call(esc, rest) + (end or "")
            continue
        m = _ASSIGN.match(line)
        if m:
            indent, lhs, esc, rest, end = m.groups()
            call = _call("!!" if esc == "!" else esc, rest)
            found[i] = "%s%s = %s%s" % (indent, lhs, call, end or "")
    return found


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
    for i in cands:
        line = lines[i]
        indent = line[: len(line) - len(line.lstrip(" \t"))]
        work[i] = indent + _PLACEHOLDER % i + ("\n" if line.endswith("\n") else "")
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
        lines[i] = cands[i]
    return "".join(lines)


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
    import subprocess

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
    import subprocess

    _core._flush_std()
    kw = {}
    if capture:
        kw = {"stdout": subprocess.PIPE, "stderr": subprocess.STDOUT}
    if stdin_data is not None:
        kw["stdin"] = subprocess.PIPE
        stdin_data = stdin_data.encode()
    p = subprocess.Popen(argv, **kw)
    try:
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
        import pathlib

        return [pathlib.Path(x) for x in self if os.path.exists(x)]

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


# --- magics ---------------------------------------------------------------


class UsageError(Exception):
    """A magic called wrongly, or one evalhost does not have."""


UsageError.__module__ = "builtins"
_line_magics = {}
_cell_magics = {}


def _magic(kind, *names, expand_vars=True):
    def register(fn):
        for n in names:
            (_line_magics if kind == "line" else _cell_magics)[n] = (fn, expand_vars)
        return fn

    return register


def _supported():
    return "line magics: %s; cell magics: %s; shell escapes: !cmd, x = !cmd" % (
        ", ".join("%" + n for n in sorted(_line_magics)),
        ", ".join("%%" + n for n in sorted(_cell_magics)),
    )


def line_magic(name, args, frame):
    entry = _line_magics.get(name)
    if entry is None:
        hint = " (it is a cell magic: put %%%%%s on the cell's first line)" % name if name in _cell_magics else ""
        raise UsageError("line magic %%%s not found%s; evalhost supports %s; start the session with "
                         "IPython mode (--ipython) for the rest" % (name, hint, _supported()))
    fn, exp = entry
    return fn(expand(args, frame) if exp else args, frame)


def cell_magic(name, args, body, offset, frame):
    entry = _cell_magics.get(name)
    if entry is None:
        hint = " (it is a line magic: write %%%s)" % name if name in _line_magics else ""
        raise UsageError("cell magic %%%%%s not found%s; evalhost supports %s; start the session with "
                         "IPython mode (--ipython) for the rest" % (name, hint, _supported()))
    fn, exp = entry
    return fn(expand(args, frame) if exp else args, body, offset, frame)


def _cell_name():
    return "<cell %d>" % _core._count


def _run_code(src, frame, offset, name=None):
    """Run src as cell code at line offset+1 of the cell (or as the source
    registered under name); return its last value."""
    ns = frame.f_globals if frame is not None else _core._ns
    local = frame.f_locals if frame is not None else None
    if name is not None:
        _core._register_source(name, src)
        return _core._run_source(src, name, ns, local)
    return _core._run_source("\n" * offset + src, _cell_name(), ns, local)


def _split_args(args):
    import shlex

    try:
        return shlex.split(args)
    except ValueError as e:
        raise UsageError("cannot parse %r: %s" % (args, e)) from None


# time and timeit


def _format_time(span, precision=3):
    """Like IPython's _format_time: 1.23 s, 4.56 ms, 7.89 µs, 12.3 ns."""
    import math

    if span >= 60.0:
        parts, value = [], span
        for suffix, length in (("d", 86400), ("h", 3600), ("min", 60), ("s", 1)):
            v = int(value / length)
            if v > 0:
                value = value % length
                parts.append("%s%s" % (v, suffix))
            if value < 1:
                break
        return " ".join(parts)
    units, scale = ["s", "ms", "\xb5s", "ns"], [1, 1e3, 1e6, 1e9]
    order = min(-int(math.floor(math.log10(span)) // 3), 3) if span > 0 else 3
    return "%.*g %s" % (precision, span * scale[order], units[order])


def _cpu_times():
    """(user, system) CPU seconds of this process, in microseconds as IPython's
    %time reads them; os.times() counts clock ticks (10 ms), so a fast
    statement would show 0 ns."""
    try:
        import resource

        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime, r.ru_stime
    except ImportError:
        t = os.times()
        return t.user, t.system


def _timed(src, frame, offset, name=None):
    import time

    t0, w0 = _cpu_times(), time.perf_counter()
    try:
        return _run_code(src, frame, offset, name)
    finally:
        t1, w1 = _cpu_times(), time.perf_counter()
        user, sys_ = t1[0] - t0[0], t1[1] - t0[1]
        print("CPU times: user %s, sys: %s, total: %s" % (_format_time(user), _format_time(sys_), _format_time(user + sys_)))
        print("Wall time: %s" % _format_time(w1 - w0))


@_magic("line", "time", expand_vars=False)
def _m_time(args, frame):
    if not args.strip():
        raise UsageError("%time needs a statement: %time f()")
    # The statement is compiled as its own source, as IPython's <timed exec>:
    # under the cell's name its columns would not match the magic line's.
    line = frame.f_lineno if frame else 0
    return _timed(args, frame, 0, "<%%time, cell %d line %d>" % (_core._count, line))


@_magic("cell", "time", expand_vars=False)
def _c_time(args, body, offset, frame):
    return _timed(body, frame, offset)


class TimeitResult:
    """What %timeit -o returns: loops, repeat, best, worst, all_runs, average, stdev."""

    def __init__(self, loops, repeat, best, worst, all_runs, precision=3):
        self.loops, self.repeat = loops, repeat
        self.best, self.worst, self.all_runs = best, worst, all_runs
        self._precision = precision
        self.timings = [dt / loops for dt in all_runs]

    @property
    def average(self):
        return sum(self.timings) / len(self.timings)

    @property
    def stdev(self):
        mean = self.average
        return (sum((x - mean) ** 2 for x in self.timings) / len(self.timings)) ** 0.5

    def __str__(self):
        return "%s \xb1 %s per loop (mean \xb1 std. dev. of %d run%s, %s loop%s each)" % (
            _format_time(self.average, self._precision), _format_time(self.stdev, self._precision),
            self.repeat, "" if self.repeat == 1 else "s", "{:,}".format(self.loops), "" if self.loops == 1 else "s",
        )

    def __repr__(self):
        return "<TimeitResult : " + str(self) + ">"


def _timeit_opts(args):
    """Parse %timeit's -n N -r R -q -o -p P options; return (opts, statement)."""
    opts = {"n": 0, "r": 7, "q": False, "o": False, "p": 3}
    rest = args.lstrip()
    while rest.startswith("-"):
        flag, _, tail = rest.partition(" ")
        key = flag[1:2]
        if key in ("q", "o") and len(flag) == 2:
            opts[key] = True
            rest = tail.lstrip()
            continue
        if key in ("n", "r", "p"):
            value = flag[2:]
            if not value:
                value, _, tail = tail.lstrip().partition(" ")
            try:
                opts[key] = int(value)
            except ValueError:
                raise UsageError("%%timeit -%s needs a whole number, got %r" % (key, value)) from None
            rest = tail.lstrip()
            continue
        raise UsageError("%%timeit: unknown option %s (known: -n N, -r R, -q, -o, -p P)" % flag)
    return opts, rest


def _timeit(stmt, setup, frame, opts):
    import timeit

    if not stmt.strip():
        raise UsageError("%timeit needs a statement: %timeit f()")
    ns = _namespace(frame)
    timer = timeit.Timer(stmt, setup or "pass", globals=ns)
    number = opts["n"]
    if number <= 0:
        number = 1
        for i in range(10):
            number = 10 ** i
            if timer.timeit(number) >= 0.2:
                break
    repeat = max(opts["r"], 1)
    runs = timer.repeat(repeat, number)
    res = TimeitResult(number, repeat, min(runs) / number, max(runs) / number, runs, opts["p"])
    if not opts["q"]:
        if res.worst > 4 * res.best and res.best > 0 and res.worst > 1e-6:
            print("The slowest run took %0.2f times longer than the fastest. This could mean that an "
                  "intermediate result is being cached." % (res.worst / res.best))
        print(res)
    return res if opts["o"] else None


@_magic("line", "timeit", expand_vars=False)
def _m_timeit(args, frame):
    opts, stmt = _timeit_opts(args)
    return _timeit(stmt, "", frame, opts)


@_magic("cell", "timeit", expand_vars=False)
def _c_timeit(args, body, offset, frame):
    opts, setup = _timeit_opts(args)
    return _timeit(body, setup, frame, opts)


# shell, files, directories


@_magic("line", "pip")
def _m_pip(args, frame):
    """%pip: pip of this very interpreter, output streamed."""
    import importlib

    rc, _ = run_process([sys.executable, "-m", "pip"] + _split_args(args))
    importlib.invalidate_caches()
    _set_exit_code(rc)
    if rc != 0:
        print("pip exited with status %d" % rc, file=sys.stderr)
    return None


@_magic("line", "sx", "system")
def _m_sx(args, frame):
    return getoutput(args)


def _shell_cell(which):
    def run(args, body, offset, frame):
        import shutil

        if args.strip():
            raise UsageError("%%%%%s takes no options here, got %r" % (which, args))
        rc, _ = run_process([shutil.which(which) or "/bin/sh", "-c", body])
        _set_exit_code(rc)
        return None

    return run


_cell_magics["bash"] = (_shell_cell("bash"), False)
_cell_magics["sh"] = (_shell_cell("sh"), False)


@_magic("cell", "writefile")
def _c_writefile(args, body, offset, frame):
    argv = _split_args(args)
    append = "-a" in argv or "--append" in argv
    paths = [a for a in argv if a not in ("-a", "--append")]
    if len(paths) != 1:
        raise UsageError("%%writefile takes one path (and -a to append): %%writefile [-a] path.py")
    path = os.path.expanduser(paths[0])
    exists = os.path.exists(path)
    print("%s %s" % ("Appending to" if append else "Overwriting" if exists else "Writing", paths[0]))
    with open(path, "a" if append else "w", encoding="utf-8") as f:
        f.write(body)
    return None


_prev_dir = [None]


@_magic("line", "cd")
def _m_cd(args, frame):
    argv = _split_args(args)
    argv = [a for a in argv if a not in ("-q",)]
    quiet = "-q" in args.split()
    if len(argv) > 1:
        raise UsageError("%%cd takes one directory, got %r" % args)
    if not argv:
        target = os.path.expanduser("~")
    elif argv[0] == "-":
        if _prev_dir[0] is None:
            raise UsageError("%cd -: no previous directory yet")
        target = _prev_dir[0]
    else:
        target = os.path.expanduser(argv[0])
    before = os.getcwd()
    try:
        os.chdir(target)
    except OSError as e:
        raise UsageError("%%cd: cannot change to %r: %s" % (target, e.strerror or e)) from None
    _prev_dir[0] = before
    here = os.getcwd()
    if here not in sys.path:
        sys.path.insert(0, here)
    if not quiet:
        print(here)
    return None


@_magic("line", "pwd")
def _m_pwd(args, frame):
    return os.getcwd()


_SECRET = ("KEY", "TOKEN", "SECRET", "PASS", "PWD", "CREDENTIAL")


@_magic("line", "env")
def _m_env(args, frame):
    a = args.strip()
    if not a:
        return {k: ("<hidden>" if any(w in k.upper() for w in _SECRET) else v) for k, v in os.environ.items()}
    if "=" in a or " " in a:
        name, _, value = a.partition("=" if "=" in a and ("=" in a.split(" ")[0]) else " ")
        name, value = name.strip(), value.strip()
        if not name:
            raise UsageError("%env: use %env NAME=VALUE or %env NAME VALUE")
        os.environ[name] = value
        print("env: %s=%s" % (name, value))
        return None
    if a not in os.environ:
        raise UsageError("%%env: environment variable %s is not set" % a)
    return os.environ[a]


@_magic("line", "set_env")
def _m_set_env(args, frame):
    name, _, value = args.strip().partition(" ")
    if not name or not value:
        raise UsageError("%set_env needs a name and a value: %set_env NAME VALUE")
    os.environ[name] = value.strip()
    print("env: %s=%s" % (name, value.strip()))


# namespace


def _user_names():
    ns = _core._ns
    hidden = _core._hidden
    return sorted(
        k for k in ns
        if not k.startswith("_") and k not in hidden and k not in ("In", "Out", "exit", "quit", "get_ipython")
    )


@_magic("line", "who")
def _m_who(args, frame):
    want = set(args.split())
    names = [n for n in _user_names() if not want or type(_core._ns[n]).__name__ in want]
    if not names:
        print("Interactive namespace is empty.")
        return None
    print("\t".join(names))
    return None


@_magic("line", "who_ls")
def _m_who_ls(args, frame):
    want = set(args.split())
    return [n for n in _user_names() if not want or type(_core._ns[n]).__name__ in want]


@_magic("line", "whos")
def _m_whos(args, frame):
    names = _user_names()
    if not names:
        print("Interactive namespace is empty.")
        return None
    ns = _core._ns
    rows = []
    for n in names:
        v = ns[n]
        info = repr(v) if not isinstance(v, type(sys)) else "<module '%s'>" % v.__name__
        if hasattr(v, "shape") and hasattr(v, "dtype"):
            info = "%s: %s" % (type(v).__name__, "x".join(map(str, v.shape)))
        if len(info) > 70:
            info = info[:35] + "<...>" + info[-30:]
        rows.append((n, type(v).__name__, info.replace("\n", "\\n")))
    w1 = max(8, max(len(r[0]) for r in rows)) + 3
    w2 = max(4, max(len(r[1]) for r in rows)) + 3
    print("Variable".ljust(w1) + "Type".ljust(w2) + "Data/Info")
    print("-" * (w1 + w2 + 9))
    for r in rows:
        print(r[0].ljust(w1) + r[1].ljust(w2) + r[2])
    return None


@_magic("line", "reset")
def _m_reset(args, frame):
    argv = args.split()
    if "-f" not in argv:
        raise UsageError("%reset asks for confirmation and cells have no stdin: use %reset -f")
    ns = _core._ns
    for k in list(ns):
        if k not in _core._hidden and not k.startswith("__"):
            del ns[k]
    out = ns.get("Out")
    ns["Out"] = ns["_oh"] = {} if type(out) is not dict else (out.clear() or out)
    ns.update(_="", __="", ___="")
    if "In" not in ns:
        ns["In"] = ns["_ih"] = [""]
    import gc

    gc.collect()
    return None


# running and loading code


@_magic("line", "run")
def _m_run(args, frame):
    argv = _split_args(args)
    interactive = False
    while argv and argv[0].startswith("-"):
        flag = argv.pop(0)
        if flag == "-i":
            interactive = True
        else:
            raise UsageError("%%run: option %s is not supported here (use %%run [-i] file.py [args])" % flag)
    if not argv:
        raise UsageError("%run needs a file: %run script.py [args]")
    path = os.path.expanduser(argv[0])
    if not os.path.exists(path) and os.path.exists(path + ".py"):
        path += ".py"
    try:
        with open(path, "rb") as f:
            code = compile(f.read(), path, "exec", 0, True)
    except OSError as e:
        raise UsageError("%%run: cannot read %r: %s" % (path, e.strerror or e)) from None
    ns = _core._ns
    g = ns if interactive else {"__name__": "__main__", "__builtins__": builtins}
    saved = sys.argv, g.get("__file__")
    g["__file__"] = path
    sys.argv = [path] + argv[1:]
    try:
        exec(code, g)
    except SystemExit as e:
        if e.code not in (None, 0):
            raise
    finally:
        sys.argv = saved[0]
        if interactive:
            if saved[1] is None:
                g.pop("__file__", None)
            else:
                g["__file__"] = saved[1]
        else:
            ns.update((k, v) for k, v in g.items() if k not in ("__name__", "__builtins__", "__file__"))
    return None


@_magic("line", "load")
def _m_load(args, frame):
    argv = _split_args(args)
    if len(argv) != 1 or argv[0].startswith("-"):
        raise UsageError("%load takes one file: %load script.py")
    path = os.path.expanduser(argv[0])
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            src = f.read()
    except OSError as e:
        raise UsageError("%%load: cannot read %r: %s" % (path, e.strerror or e)) from None
    print("# %%load %s: evalhost cannot replace the cell, so the code is shown, not run; "
          "use %%run %s to run it" % (argv[0], argv[0]))
    print(src, end="" if src.endswith("\n") else "\n")
    return None


@_magic("line", "matplotlib")
def _m_matplotlib(args, frame):
    gui = args.strip()
    if gui and gui not in ("inline", "agg", "Agg"):
        print("%%matplotlib %s: evalhost sends figures as PNG images; the Agg backend is kept" % gui, file=sys.stderr)
    os.environ["MPLBACKEND"] = "Agg"
    mpl = sys.modules.get("matplotlib")
    if mpl is not None:
        try:
            mpl.use("Agg")
        except Exception:
            pass
    return None


# extensions and autoreload


@_magic("line", "load_ext", "reload_ext")
def _m_load_ext(args, frame):
    import importlib

    name = args.strip()
    if not name:
        raise UsageError("%load_ext needs a module name: %load_ext autoreload")
    if name == "autoreload":
        return None
    mod = importlib.import_module(name)
    load = getattr(mod, "load_ipython_extension", None)
    if load is None:
        raise UsageError("%%load_ext: module %s has no load_ipython_extension function" % name)
    load(shell())
    return None


@_magic("line", "unload_ext")
def _m_unload_ext(args, frame):
    name = args.strip()
    if name == "autoreload":
        _autoreload.set_mode(0)
        return None
    mod = sys.modules.get(name)
    unload = getattr(mod, "unload_ipython_extension", None)
    if unload is not None:
        unload(shell())
    return None


class _Autoreload:
    """%autoreload: reload modules whose source changed, before each cell."""

    def __init__(self):
        self.mode = 0
        self.explicit = set()
        self.mtimes = {}

    def set_mode(self, mode):
        self.mode = mode
        hooks = _core._pre_cell
        if mode and self.check not in hooks:
            self.mtimes = {}
            self.scan(record_only=True)
            hooks.append(self.check)
        elif not mode and self.check in hooks:
            hooks.remove(self.check)

    def scan(self, record_only=False):
        import importlib

        for name, mod in list(sys.modules.items()):
            if self.mode == 1 and name not in self.explicit:
                continue
            path = getattr(mod, "__file__", None)
            if not path or not path.endswith(".py") or name.startswith("_evalhost"):
                continue
            try:
                mtime = os.stat(path).st_mtime
            except OSError:
                continue
            old = self.mtimes.get(name)
            self.mtimes[name] = mtime
            if record_only or old is None or mtime == old:
                continue
            try:
                importlib.reload(mod)
            except Exception as e:
                print("[autoreload of %s failed: %s: %s]" % (name, type(e).__name__, e), file=sys.stderr)

    def check(self):
        self.scan()


_autoreload = _Autoreload()


@_magic("line", "autoreload")
def _m_autoreload(args, frame):
    a = args.strip() or "2"
    modes = {"0": 0, "off": 0, "1": 1, "explicit": 1, "2": 2, "all": 2, "3": 2, "complete": 2}
    if a not in modes:
        raise UsageError("%%autoreload takes 0, 1, 2 or 3 (off, explicit, all, complete), got %r" % a)
    _autoreload.set_mode(modes[a])
    return None


@_magic("line", "aimport")
def _m_aimport(args, frame):
    import importlib

    for name in args.replace(",", " ").split():
        if name.startswith("-"):
            _autoreload.explicit.discard(name[1:])
            continue
        importlib.import_module(name)
        _autoreload.explicit.add(name)
        frame.f_globals[name.split(".")[0]] = sys.modules[name.split(".")[0]]
    return None


# rich cells


def _display_cell(mime):
    def show(args, body, offset, frame):
        _core.display({mime: body, "text/plain": "<%s>" % mime}, raw=True)

    return show


for _name, _mime in (("html", "text/html"), ("markdown", "text/markdown"), ("svg", "image/svg+xml"),
                     ("latex", "text/latex"), ("javascript", "application/javascript"), ("js", "application/javascript")):
    _cell_magics[_name] = (_display_cell(_mime), False)


@_magic("cell", "python", "python3")
def _c_python(args, body, offset, frame):
    rc, _ = run_process([sys.executable, "-"], stdin_data=body)
    _set_exit_code(rc)
    return None


# %%capture


class RichOutput:
    """One captured display: .data (MIME bundle) and .metadata; display() shows it again."""

    def __init__(self, data=None, metadata=None, transient=None, update=False, kind="display"):
        self.data = data or {}
        self.metadata = metadata or {}
        self.transient = transient or {}
        self.update = update
        self._kind = kind

    def display(self):
        if self._kind == "clear_output":
            _core._emit_clear(bool(self.data))
            return
        did = self.transient.get("display_id")
        kind = "update_display" if self._kind == "update_display" else "display"
        _core._emit_display(kind, self.data, self.metadata, did)

    def _repr_mimebundle_(self, include=None, exclude=None):
        return self.data, self.metadata

    def __repr__(self):
        return "<RichOutput %s>" % ", ".join(self.data) if isinstance(self.data, dict) else "<clear_output>"


class CapturedIO:
    """What %%capture stores: .stdout, .stderr, .outputs; show() (or calling it) replays them."""

    def __init__(self, stdout, stderr, outputs):
        self._stdout, self._stderr, self._outputs = stdout, stderr, outputs

    def __str__(self):
        return self.stdout

    def __repr__(self):
        return "<CapturedIO stdout=%d chars, stderr=%d chars, %d outputs>" % (
            len(self.stdout), len(self.stderr), len(self.outputs))

    @property
    def stdout(self):
        return self._stdout.getvalue() if self._stdout is not None else ""

    @property
    def stderr(self):
        return self._stderr.getvalue() if self._stderr is not None else ""

    @property
    def outputs(self):
        return [RichOutput(*_captured(e)) for e in self._outputs]

    def show(self):
        if self.stdout:
            sys.stdout.write(self.stdout)
            sys.stdout.flush()
        if self.stderr:
            sys.stderr.write(self.stderr)
        for o in self.outputs:
            o.display()

    __call__ = show


def _captured(entry):
    """A %%capture list entry (kind, bundle, metadata, display_id) as RichOutput arguments."""
    kind, bundle, meta, did = entry
    if kind == "clear_output":
        return (bundle, None, None, False, kind)
    return (bundle, meta, {"display_id": did} if did else None, kind == "update_display", kind)


class capture_output:
    """Context manager capturing sys.stdout/sys.stderr and displays into a CapturedIO."""

    def __init__(self, stdout=True, stderr=True, display=True):
        self.want = stdout, stderr, display

    def __enter__(self):
        self.saved = sys.stdout, sys.stderr, _core._capture
        out = io.StringIO() if self.want[0] else None
        err = io.StringIO() if self.want[1] else None
        _core._flush_std()
        if out is not None:
            sys.stdout = out
        if err is not None:
            sys.stderr = err
        self.entries = []
        if self.want[2]:
            _core._capture = self.entries
        self.io = CapturedIO(out, err, self.entries)
        return self.io

    def __exit__(self, *exc):
        sys.stdout, sys.stderr, _core._capture = self.saved
        return False


@_magic("cell", "capture")
def _c_capture(args, body, offset, frame):
    argv = _split_args(args)
    flags = {"--no-stdout", "--no-stderr", "--no-display"}
    names = [a for a in argv if a not in flags]
    bad = [a for a in names if a.startswith("-") or not a.isidentifier()]
    if bad or len(names) > 1:
        raise UsageError("%%capture [--no-stdout] [--no-stderr] [--no-display] [name]: bad arguments %r" % args)
    with capture_output("--no-stdout" not in argv, "--no-stderr" not in argv, "--no-display" not in argv) as cap:
        value = _run_code(body, frame, offset)
        if value is not None:
            _core._send_result(value)  # into the capture, as IPython's displayhook output
    if names:
        (frame.f_globals if frame is not None else _core._ns)[names[0]] = cap
    return None


# --- the entry points the rewritten code calls ---------------------------


class _Entry:
    """builtins.__evh__: what transform() turns magics and escapes into."""

    @staticmethod
    def system(cmd):
        return system(expand(cmd, sys._getframe(1)))

    @staticmethod
    def getoutput(cmd):
        return getoutput(expand(cmd, sys._getframe(1)))

    @staticmethod
    def line_magic(name, args):
        return line_magic(name, args, sys._getframe(1))

    @staticmethod
    def cell_magic(name, args, body, offset):
        return cell_magic(name, args, body, offset, sys._getframe(1))

    @staticmethod
    def misplaced_cell_magic(name):
        raise UsageError("cell magic %%%%%s must be on the first line of the cell" % name)


builtins.__evh__ = _Entry


# --- get_ipython() --------------------------------------------------------


class DisplayPublisher:
    """get_ipython().display_pub: publish MIME bundles (with display ids), clear output."""

    def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kwargs):
        did = (transient or {}).get("display_id")
        if update and not did:
            raise TypeError("publish(update=True) needs transient={'display_id': ...}")
        _core._emit_display("update_display" if update else "display", _core._bundle_of(data, True, None)[0],
                            metadata or None, did)

    def clear_output(self, wait=False):
        _core._emit_clear(bool(wait))


class EventManager:
    """get_ipython().events: callbacks for pre/post_execute and pre/post_run_cell."""

    names = ("pre_execute", "pre_run_cell", "post_execute", "post_run_cell", "shell_initialized")

    def __init__(self):
        self.callbacks = {n: [] for n in self.names}

    def register(self, event, fn):
        if event not in self.callbacks:
            raise KeyError("unknown event %r; known: %s" % (event, ", ".join(self.names)))
        if not callable(fn):
            raise TypeError("event callback must be callable, got %r" % (fn,))
        if fn not in self.callbacks[event]:
            self.callbacks[event].append(fn)
        self._hook()

    def unregister(self, event, fn):
        try:
            self.callbacks[event].remove(fn)
        except (KeyError, ValueError):
            raise ValueError("function %r is not registered as a %r callback" % (fn, event)) from None

    def trigger(self, event, *args, **kwargs):
        for fn in list(self.callbacks.get(event, ())):
            try:
                fn(*args, **kwargs)
            except Exception as e:
                print("Error in callback %r (for %s): %s: %s" % (fn, event, type(e).__name__, e), file=sys.stderr)

    def _hook(self):
        if self._pre not in _core._pre_cell:
            _core._pre_cell.append(self._pre)
            _core._post_cell.append(self._post)

    def _pre(self):
        self.trigger("pre_execute")
        if self.callbacks["pre_run_cell"]:
            self.trigger("pre_run_cell", ExecutionInfo(_core._ns.get("_i00", "")))

    def _post(self, status):
        self.trigger("post_execute")
        if self.callbacks["post_run_cell"]:
            self.trigger("post_run_cell", ExecutionResult(status == "ok"))


class ExecutionInfo:
    def __init__(self, raw_cell):
        self.raw_cell = raw_cell
        self.store_history = True
        self.silent = False
        self.shell_futures = True
        self.cell_id = None


class ExecutionResult:
    def __init__(self, success, result=None, error=None):
        self.success = success
        self.result = result
        self.error_in_exec = error
        self.error_before_exec = None
        self.execution_count = _core._count

    def raise_error(self):
        if self.error_in_exec is not None:
            raise self.error_in_exec


class EvalhostShell:
    """The get_ipython() stand-in: magics, shell commands, the namespace, display publishing.

    kernel is None (there is no Jupyter kernel); config is an empty dict.
    """

    kernel = None

    def __init__(self):
        self.display_pub = DisplayPublisher()
        self.events = EventManager()
        self.config = {}

    @property
    def user_ns(self):
        return _core._ns

    user_global_ns = user_ns

    @property
    def execution_count(self):
        return _core._count

    def run_line_magic(self, magic_name, line, _stack_depth=1):
        return line_magic(magic_name, line, sys._getframe(_stack_depth))

    def run_cell_magic(self, magic_name, line, cell):
        return cell_magic(magic_name, line, cell, 0, sys._getframe(1))

    def magic(self, arg_s):
        name, _, line = arg_s.lstrip("%").partition(" ")
        return line_magic(name, line, sys._getframe(1))

    def find_line_magic(self, name):
        entry = _line_magics.get(name)
        return entry and entry[0]

    def find_cell_magic(self, name):
        entry = _cell_magics.get(name)
        return entry and entry[0]

    def register_magic_function(self, func, magic_kind="line", magic_name=None):
        name = magic_name or func.__name__
        if magic_kind == "line":
            _line_magics[name] = (lambda args, frame: func(args), True)
        elif magic_kind == "cell":
            _cell_magics[name] = (lambda args, body, offset, frame: func(args, body), False)
        elif magic_kind == "line_cell":
            _line_magics[name] = (lambda args, frame: func(args), True)
            _cell_magics[name] = (lambda args, body, offset, frame: func(args, body), False)
        else:
            raise ValueError("magic_kind must be 'line', 'cell' or 'line_cell', got %r" % magic_kind)

    def system(self, cmd):
        return system(expand(cmd, sys._getframe(1)))

    system_raw = system_piped = system

    def getoutput(self, cmd, split=True, depth=0):
        return getoutput(expand(cmd, sys._getframe(1 + depth)), split)

    def ex(self, cmd):
        exec(cmd, _core._ns)

    def ev(self, expr):
        return eval(expr, _core._ns)

    def push(self, variables, interactive=True):
        if isinstance(variables, str):
            frame = sys._getframe(1)
            variables = {n: eval(n, frame.f_globals, frame.f_locals) for n in variables.replace(",", " ").split()}
        _core._ns.update(variables)

    def run_cell(self, raw_cell, store_history=False, silent=False, shell_futures=True, cell_id=None):
        """Run source in the user namespace (magics allowed); errors are returned, not raised."""
        try:
            value = _core._run_source(raw_cell, "<run_cell %d>" % _core._count)
        except Exception as e:
            return ExecutionResult(False, error=e)
        if value is not None and not silent:
            _core.display(value)
        return ExecutionResult(True, result=value)

    def enable_gui(self, gui=None):
        return None

    def enable_matplotlib(self, gui=None):
        _m_matplotlib(gui or "", None)
        return gui, gui

    def showtraceback(self, *args, **kwargs):
        import traceback

        traceback.print_exc()

    def __repr__(self):
        return "<evalhost shell: run_line_magic, run_cell_magic, system, getoutput, user_ns, display_pub>"


_shell = []


def shell():
    if not _shell:
        _shell.append(EvalhostShell())
    return _shell[0]


# --- IPython.display without IPython --------------------------------------


class DisplayObject:
    """Base of the IPython.display objects: data, or a file or URL to read it from."""

    _read_flags = "r"

    def __init__(self, data=None, url=None, filename=None, metadata=None):
        if data is not None and hasattr(data, "__fspath__"):
            data = os.fspath(data)
        if isinstance(data, str) and url is None and filename is None:
            if data.startswith(("http://", "https://")):
                url, data = data, None
            elif len(data) < 4096 and "\n" not in data and os.path.isfile(data):
                filename, data = data, None
        self.data, self.url, self.filename = data, url, filename
        self.metadata = dict(metadata) if metadata else {}
        self.reload()

    def reload(self):
        if self.filename is not None:
            with open(self.filename, self._read_flags) as f:
                self.data = f.read()
        elif self.url is not None and getattr(self, "embed", True):
            import urllib.request

            with urllib.request.urlopen(self.url) as r:
                raw = r.read()
            self.data = raw if "b" in self._read_flags else raw.decode("utf-8", "replace")

    def _data_and_metadata(self):
        return (self.data, self.metadata) if self.metadata else self.data

    def __repr__(self):
        return "<IPython.core.display.%s object>" % type(self).__name__


class TextDisplayObject(DisplayObject):
    def __init__(self, data=None, url=None, filename=None, metadata=None):
        if isinstance(data, (bytes, bytearray)):
            data = bytes(data).decode("utf-8", "replace")
        super().__init__(data, url, filename, metadata)


class HTML(TextDisplayObject):
    def _repr_html_(self):
        return self._data_and_metadata()


class Markdown(TextDisplayObject):
    def _repr_markdown_(self):
        return self._data_and_metadata()


class Latex(TextDisplayObject):
    def _repr_latex_(self):
        return self._data_and_metadata()


class Math(TextDisplayObject):
    def _repr_latex_(self):
        s = r"$\displaystyle %s$" % (self.data or "").strip("$")
        return (s, self.metadata) if self.metadata else s


class SVG(DisplayObject):
    _read_flags = "rb"

    def _repr_svg_(self):
        data = self.data
        if isinstance(data, (bytes, bytearray)):
            data = bytes(data).decode("utf-8", "replace")
        i = data.find("<svg") if data else -1
        data = data[i:] if i > 0 else data  # drop an XML prolog, as IPython does
        return (data, self.metadata) if self.metadata else data


class Javascript(TextDisplayObject):
    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"application/javascript": self.data or ""}, self.metadata


class JSON(DisplayObject):
    """JSON data shown as a tree by front ends that render application/json."""

    def __init__(self, data=None, url=None, filename=None, expanded=False, metadata=None, root="root", **kwargs):
        meta = {"expanded": expanded, "root": root}
        if metadata:
            meta.update(metadata)
        meta.update(kwargs)
        self._json_meta = meta
        if isinstance(data, str) and url is None and filename is None and not os.path.isfile(data):
            import json

            data = json.loads(data)
        super().__init__(data, url, filename)

    def reload(self):
        super().reload()
        if isinstance(self.data, str) and (self.filename or self.url):
            import json

            self.data = json.loads(self.data)

    def _repr_json_(self):
        return self.data, self._json_meta


_IMAGE_TYPES = {"png": "image/png", "jpeg": "image/jpeg", "jpg": "image/jpeg", "gif": "image/gif",
                "webp": "image/webp", "svg": "image/svg+xml"}


class Image(DisplayObject):
    """A PNG, JPEG, GIF or WebP image from bytes, a file or a URL (embedded unless a URL)."""

    _read_flags = "rb"

    def __init__(self, data=None, url=None, filename=None, format=None, embed=None, width=None, height=None,
                 retina=False, unconfined=False, metadata=None, alt=None):
        if isinstance(data, str) and data.startswith(("http://", "https://")) and url is None:
            url, data = data, None
        if embed is None:
            embed = url is None
        self.embed = embed
        self.width, self.height, self.retina, self.unconfined, self.alt = width, height, retina, unconfined, alt
        source = filename or url or (data if isinstance(data, str) else None)
        if format is None and source:
            ext = source.rsplit(".", 1)[-1].lower()
            format = ext if ext in _IMAGE_TYPES else None
        super().__init__(data, url, filename, metadata)
        if format is None and isinstance(self.data, (bytes, bytearray)):
            head = bytes(self.data[:12])
            format = ("png" if head.startswith(b"\x89PNG") else "jpeg" if head.startswith(b"\xff\xd8")
                      else "gif" if head.startswith(b"GIF8") else "webp" if head[8:12] == b"WEBP" else None)
        if format is None:
            format = "png"
        if format.lower() not in _IMAGE_TYPES:
            raise ValueError("Image format %r is not supported; use one of %s" % (format, ", ".join(sorted(_IMAGE_TYPES))))
        self.format = format.lower()
        self.mimetype = _IMAGE_TYPES[self.format]

    def _repr_mimebundle_(self, include=None, exclude=None):
        md = {k: v for k, v in (("width", self.width), ("height", self.height), ("alt", self.alt)) if v}
        if self.unconfined:
            md["unconfined"] = True
        md.update(self.metadata)
        if not self.embed:
            attrs = "".join(' %s="%s"' % (k, v) for k, v in md.items() if k in ("width", "height", "alt"))
            return {"text/html": '<img src="%s"%s/>' % (self.url, attrs)}, {}
        return {self.mimetype: self.data}, ({self.mimetype: md} if md else {})


class Pretty(TextDisplayObject):
    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"text/plain": self.data or ""}, {}


class Code(TextDisplayObject):
    def __init__(self, data=None, url=None, filename=None, language=None):
        self.language = language
        super().__init__(data, url, filename)

    def _repr_mimebundle_(self, include=None, exclude=None):
        import html

        return {"text/html": "<pre>%s</pre>" % html.escape(self.data or ""), "text/plain": self.data or ""}, {}


class IFrame:
    def __init__(self, src, width, height, extras=None, **kwargs):
        self.src, self.width, self.height = src, width, height
        self.extras = list(extras or ()) + ['%s="%s"' % kv for kv in kwargs.items()]

    def _repr_html_(self):
        return '<iframe width="%s" height="%s" src="%s" frameborder="0" allowfullscreen %s></iframe>' % (
            self.width, self.height, self.src, " ".join(self.extras))


class FileLink:
    def __init__(self, path, url_prefix="", result_html_prefix="", result_html_suffix="<br>"):
        self.path, self.url_prefix = os.fspath(path), url_prefix
        self.prefix, self.suffix = result_html_prefix, result_html_suffix

    def _repr_html_(self):
        import html

        p = html.escape(self.path)
        return '%s<a href="%s%s" target="_blank">%s</a>%s' % (self.prefix, self.url_prefix, p, p, self.suffix)

    def __repr__(self):
        return os.path.abspath(self.path)


def _display_as(mime):
    def show(*objs, raw=False, metadata=None):
        if raw:
            for o in objs:
                _core.display({mime: o}, raw=True, metadata={mime: metadata} if metadata else None)
        else:
            _core.display(*objs, include=[mime], metadata={mime: metadata} if metadata else None)

    show.__name__ = "display_" + mime.split("/")[-1].replace("svg+xml", "svg")
    return show


def publish_display_data(data, metadata=None, source=None, *, transient=None, **kwargs):
    shell().display_pub.publish(data, metadata, transient=transient, update=kwargs.get("update", False))


def _display_api():
    """The names IPython.display offers, bound to the runner."""
    api = {
        "display": _core.display, "update_display": _core.update_display, "clear_output": _core.clear_output,
        "DisplayHandle": _core.DisplayHandle, "publish_display_data": publish_display_data,
        "DisplayObject": DisplayObject, "TextDisplayObject": TextDisplayObject, "HTML": HTML, "Markdown": Markdown,
        "Latex": Latex, "Math": Math, "SVG": SVG, "Javascript": Javascript, "JSON": JSON, "Image": Image,
        "Pretty": Pretty, "Code": Code, "IFrame": IFrame, "FileLink": FileLink,
    }
    for name, mime in (("html", "text/html"), ("markdown", "text/markdown"), ("svg", "image/svg+xml"),
                       ("png", "image/png"), ("jpeg", "image/jpeg"), ("json", "application/json"),
                       ("latex", "text/latex"), ("javascript", "application/javascript"),
                       ("pretty", "text/plain"), ("pdf", "application/pdf")):
        api["display_" + name] = _display_as(mime)
    return api


_SHIM = {
    "IPython": None,
    "IPython.display": "display",
    "IPython.core": None,
    "IPython.core.display": "display",
    "IPython.core.display_functions": "display",
    "IPython.core.getipython": None,
    "IPython.utils": None,
    "IPython.utils.capture": "capture",
}


class _ShimLoader:
    """Builds the IPython shim modules (used only when IPython is not installed)."""

    @staticmethod
    def create_module(spec):
        return None

    @staticmethod
    def exec_module(module):
        name = module.__name__
        kind = _SHIM.get(name)
        if name in ("IPython", "IPython.core", "IPython.utils"):
            module.__path__ = []
        module.__doc__ = "evalhost's stand-in for %s (IPython is not installed)" % name
        if kind == "display":
            module.__dict__.update(_display_api())
        elif kind == "capture":
            module.__dict__.update(capture_output=capture_output, CapturedIO=CapturedIO, RichOutput=RichOutput)
        if name in ("IPython", "IPython.core.getipython"):
            module.get_ipython = _core.get_ipython
        if name == "IPython":
            module.__version__ = "0.0.0+evalhost.shim"
            module.version_info = (0, 0, 0, "evalhost-shim")
            module.evalhost_shim = True


def _patch_display_functions(mod):
    """Real IPython: its display functions send runner frames while no IPython shell runs."""
    orig = {n: getattr(mod, n) for n in ("display", "clear_output", "publish_display_data")}

    def display(*objs, **kwargs):
        if _shell_running():
            return orig["display"](*objs, **kwargs)
        h = _core.display(*objs, **kwargs)
        return mod.DisplayHandle(h.display_id) if h is not None else None

    def clear_output(wait=False):
        if _shell_running():
            return orig["clear_output"](wait)
        _core._emit_clear(bool(wait))

    def publish(data, metadata=None, source=None, *, transient=None, **kwargs):
        if _shell_running():
            return orig["publish_display_data"](data, metadata, transient=transient, **kwargs)
        publish_display_data(data, metadata, transient=transient, **kwargs)

    for n, fn in (("display", display), ("clear_output", clear_output), ("publish_display_data", publish)):
        fn.__name__, fn.__doc__, fn.__wrapped__ = n, orig[n].__doc__, orig[n]
        setattr(mod, n, fn)


def _patch_getipython(mod):
    orig = mod.get_ipython

    def get_ipython():
        return orig() or shell()

    get_ipython.__doc__ = orig.__doc__
    mod.get_ipython = get_ipython


def _shell_running():
    m = sys.modules.get("IPython.core.interactiveshell")
    return m is not None and m.InteractiveShell.initialized()


class _PatchingLoader:
    """Wraps a real IPython module's loader: runs it, then patches the module."""

    def __init__(self, loader, patch):
        self._loader, self._patch = loader, patch

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        self._patch(module)

    def __getattr__(self, name):
        return getattr(self._loader, name)


_PATCHES = {"IPython.core.display_functions": _patch_display_functions, "IPython.core.getipython": _patch_getipython}


def find_spec(name, path=None, target=None):
    """core's meta-path hook: a shim without IPython, patches with it."""
    from importlib.machinery import ModuleSpec, PathFinder

    shim = sys.modules.get("IPython")
    if name == "IPython":
        if PathFinder.find_spec(name, path) is not None:
            return None  # the real one: the path finder after us loads it
    elif shim is None or not getattr(shim, "evalhost_shim", False):
        patch = _PATCHES.get(name)
        spec = PathFinder.find_spec(name, path) if patch is not None else None
        if spec is not None and spec.loader is not None:
            spec.loader = _PatchingLoader(spec.loader, patch)
        return spec
    if name not in _SHIM:
        return None
    return ModuleSpec(name, _ShimLoader, is_package=name in ("IPython", "IPython.core", "IPython.utils"))


# --- full IPython mode (EVALHOST_IPYTHON=1) --------------------------------

full_error = None
_full = []


def _strip_ansi(s):
    return re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", s)


def start_full():
    """Create an InteractiveShell whose outputs are runner frames, on the runner's namespace."""
    from IPython.core.displayhook import DisplayHook
    from IPython.core.displaypub import DisplayPublisher as Publisher
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    class Hook(DisplayHook):
        def start_displayhook(self):
            pass

        def write_output_prompt(self):
            pass

        def write_format_data(self, format_dict, md_dict=None):
            _core._send_bundle("result", format_dict, md_dict, self.shell.execution_count)

        def finish_displayhook(self):
            pass

    class Pub(Publisher):
        def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kwargs):
            did = (transient or {}).get("display_id")
            _core._emit_display("update_display" if update else "display",
                                _core._bundle_of(data, True, None)[0], metadata or None, did)

        def clear_output(self, wait=False):
            _core._emit_clear(bool(wait))

    class Shell(InteractiveShell):
        displayhook_class = Hook
        display_pub_class = Pub

        def _showtraceback(self, etype, evalue, stb):
            lines = _strip_ansi("\n".join(stb)).split("\n")
            try:
                text = str(evalue)
            except Exception:
                text = "<unprintable %s>" % etype.__name__
            _core._send_error_lines(etype.__name__, text, lines)

    c = Config()
    c.HistoryManager.hist_file = ":memory:"
    c.InteractiveShell.colors = "NoColor"
    c.InteractiveShell.autocall = 0
    sh = Shell.instance(config=c, user_module=sys.modules["__main__"])
    _full.append(sh)


def hide_startup_names(names):
    """%who, %whos and %reset leave the prelude's and modules' names alone,
    as they do in the runner's own mode."""
    for sh in _full:
        sh.user_ns_hidden.update({k: sh.user_ns[k] for k in names if k in sh.user_ns})


def run_full(src):
    """Run one cell through InteractiveShell; its frames are the same as the runner's own."""
    if not _full:
        _core._send_plain_error(
            "IPythonUnavailable",
            "IPython mode was requested (EVALHOST_IPYTHON=1) but IPython could not start (%s); "
            "install it in this interpreter (pip install ipython) or start the session without --ipython"
            % (full_error or "unknown error"),
        )
        return "error"
    sh = _full[0]
    sh.execution_count = _core._count
    result = sh.run_cell(src, store_history=True)
    return "ok" if result.success else "error"
