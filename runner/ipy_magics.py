"""evalhost line and cell magics (%time, %cd, %%capture, ...), loaded by the
first cell that calls one (or by get_ipython().run_line_magic).

Each magic is a function registered by name; line_magic/cell_magic look it
up, expand {expr}/$name in its arguments unless it opts out, and call it
with the caller's frame. An unknown magic is a UsageError naming the
supported ones.
"""

import builtins
import os
import sys

_core = globals()["_core"]
_system = _core._module("ipy_system")
expand, getoutput, run_process = _system.expand, _system.getoutput, _system.run_process
_namespace, _set_exit_code = _system._namespace, _system._set_exit_code


def shell():
    return _core._module("ipy_shell").shell()


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


def _run_code(src, frame, offset, name=None):
    """Run src as cell code at line offset+1 of the cell (or as the source
    registered under name); return its last value."""
    ns = frame.f_globals if frame is not None else _core._ns
    local = frame.f_locals if frame is not None else None
    if name is not None:
        _core._module("cells").register_source(name, src)
        return _core._module("cells").run_source(src, name, ns, local)
    return _core._module("cells").run_part(src, offset, ns, local)


def _split_args(args):
    try:
        return _core._own("shlex").split(args)
    except ValueError as e:
        raise UsageError("cannot parse %r: %s" % (args, e)) from None


# time and timeit


def _format_time(span, precision=3):
    """Like IPython's _format_time: 1.23 s, 4.56 ms, 7.89 µs, 12.3 ns."""
    math = _core._own("math")

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
        resource = _core._own("resource")
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime, r.ru_stime
    except ImportError:
        t = os.times()
        return t.user, t.system


def _timed(src, frame, offset, name=None):
    time = _core._own("time")

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
    timeit = _core._own("timeit")

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
    rc, _ = run_process([sys.executable, "-m", "pip"] + _split_args(args))
    _core._own("importlib").invalidate_caches()
    _set_exit_code(rc)
    if rc != 0:
        print("pip exited with status %d" % rc, file=sys.stderr)
    return None


@_magic("line", "sx", "system")
def _m_sx(args, frame):
    return getoutput(args)


def _shell_cell(which):
    def run(args, body, offset, frame):
        if args.strip():
            raise UsageError("%%%%%s takes no options here, got %r" % (which, args))
        rc, _ = run_process([_core._own("shutil").which(which) or "/bin/sh", "-c", body])
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
    if here not in sys.path and not (sys.flags.isolated or getattr(sys.flags, "safe_path", False)):
        sys.path.insert(0, here)
    if not quiet:
        print(here)
    return None


@_magic("line", "pinfo", expand_vars=False)
def _m_pinfo(args, frame):
    """What obj? shows."""
    _core._module("ipy_help").pinfo(args, 0, frame)


@_magic("line", "pinfo2", expand_vars=False)
def _m_pinfo2(args, frame):
    """What obj?? shows: the source where there is one."""
    _core._module("ipy_help").pinfo(args, 1, frame)


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
    if path.lower().endswith((".ipynb", ".ipy")):
        return _run_ipython_file(path)
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


def _run_ipython_file(path):
    """%run of a notebook or an .ipy file, as IPython's safe_execfile_ipy runs
    them: the code (each code cell's, in order) runs in the user namespace,
    magics included, its values not shown, with __file__ the file's path
    meanwhile; the arguments are ignored, as IPython ignores them."""
    try:
        with open(path, encoding="utf-8-sig") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError("%%run: cannot read %r: %s" % (path, getattr(e, "strerror", None) or e)) from None
    names = [path]
    sources = [text]
    if path.lower().endswith(".ipynb"):
        json = _core._own("json")
        try:
            cells = [c for c in json.loads(text)["cells"] if c.get("cell_type") == "code"]
            sources = [c["source"] if isinstance(c["source"], str) else "".join(c["source"]) for c in cells]
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise UsageError("%%run: %r is not an nbformat 4 notebook: %s" % (path, e)) from None
        names = ["%s, cell %d" % (path, i + 1) for i in range(len(sources))]
    ns = _core._ns
    missing = object()
    saved = ns.get("__file__", missing)
    ns["__file__"] = path
    run_source = _core._module("cells").run_source
    try:
        for name, src in zip(names, sources):
            run_source(src, name, ns)
    finally:
        if saved is missing:
            ns.pop("__file__", None)
        else:
            ns["__file__"] = saved
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


@_magic("line", "config", expand_vars=False)
def _m_config(args, frame):
    return _core._module("figures").config(args, frame)


@_magic("line", "matplotlib")
def _m_matplotlib(args, frame):
    use_agg(args.strip())
    return None


def use_agg(gui):
    """%matplotlib GUI, in either mode: figures go out as images (PNG unless
    %config InlineBackend chose other formats)."""
    if gui and gui not in ("inline", "agg", "Agg"):
        print("%%matplotlib %s: evalhost sends figures as images; the Agg backend is kept" % gui, file=sys.stderr)
    os.environ["MPLBACKEND"] = "Agg"
    mpl = sys.modules.get("matplotlib")
    if mpl is not None:
        try:
            mpl.use("Agg")
        except Exception:
            pass


# extensions and autoreload


@_magic("line", "load_ext", "reload_ext")
def _m_load_ext(args, frame):
    name = args.strip()
    if not name:
        raise UsageError("%load_ext needs a module name: %load_ext autoreload")
    if name == "autoreload":
        return None
    # The user's module, found where a cell's own import finds it (as IPython's %load_ext)
    mod = _core._own("importlib").import_module(name)
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
        importlib = _core._own("importlib")  # reload: the user's modules, as a cell's import finds them
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
    importlib = _core._own("importlib")  # import_module: the user's modules, as a cell's import finds them
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


@_magic("cell", "capture")
def _c_capture(args, body, offset, frame):
    argv = _split_args(args)
    flags = {"--no-stdout", "--no-stderr", "--no-display"}
    names = [a for a in argv if a not in flags]
    bad = [a for a in names if a.startswith("-") or not a.isidentifier()]
    if bad or len(names) > 1:
        raise UsageError("%%capture [--no-stdout] [--no-stderr] [--no-display] [name]: bad arguments %r" % args)
    capture = _core._module("ipy_capture")
    with capture.capture_output("--no-stdout" not in argv, "--no-stderr" not in argv, "--no-display" not in argv) as cap:
        try:
            value = _run_code(body, frame, offset)
            if value is not None:
                _core._module("cells").show_result(value)  # into the capture, as IPython's displayhook output
        except Exception as e:
            # IPython runs the body as a cell of its own (run_cell): its error
            # is shown, not captured (ipykernel's goes out as an error
            # message), and the magic's cell goes on: ok, the name set.
            _core._send_error(e)
        # IPython's post-cell flush runs inside the capture: the figures too
        _core._flush_figures()
    ns = frame.f_globals if frame is not None else _core._ns
    if capture.ends_in_semicolon(body):
        # As IPython: a body ending in ';' leaves no name behind, and takes an older one away.
        if names:
            ns.pop(names[0], None)
    elif names:
        ns[names[0]] = cap
    return None
