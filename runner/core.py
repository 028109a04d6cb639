"""evalhost runner core: the Python end of the evalhost runner protocol.

Loaded by runner.py (the bootstrap the host starts as `python runner.py`) with fd 0 = requests (NDJSON),
fd 1/2 = raw stdout/stderr pipes and fd 3 = frames (NDJSON). The protocol is
written down in the Go package frames (frames/doc.go); wire.py writes
every frame and mark, core serves requests, starts up and exits. Stdlib only, and no
module beyond what the interpreter already loads at start-up is imported
before `ready`: start time is part of the contract.
"""

import _json
import _signal
import _thread
import builtins
import io
import os
import sys

RUNNER_VERSION = "1.1"
WARM_QUIET = 0.05  # seconds idle before the warm-up (_warm) runs

_FILE = sys._getframe().f_code.co_filename
_RUNNER_FILES = {_FILE}  # frames from these files never show in tracebacks
_HERE = os.path.dirname(os.path.abspath(__file__))
_SIGINT = _signal.SIGINT

_q = _json.encode_basestring_ascii
_bootstrap = sys.modules["_frozen_importlib"]
_external = sys.modules["_frozen_importlib_external"]

# Per-process state, set up by _setup; the cell under way is wire's _cur.
_ns = {}
_count = 0  # the execution count: one per execute request that reaches the compiler
_sources = {}
_code_sources = []  # (code objects, source): -c's, for linecache once imported (cells.keep_string)
_cell_files = set()  # the files cells came from (a request's "filename"): tracebacks start at their frames
_loader = globals().get("_loader")  # set by runner.py before this runs: _loader(dir, name) -> (path, code object)
_capture = None  # a list while %%capture collects displays instead of sending them
_pre_cell = []  # callables run before each cell (autoreload, get_ipython().events)
_post_cell = []  # callables run after each cell, with its status
_ipython_mode = False  # EVALHOST_IPYTHON=1: cells run through IPython's InteractiveShell
_start = None  # (sys.path, cwd, sys.meta_path) as the runner started: where imports.py looks
_cwd_entry = None  # the cwd _user_path put first on sys.path, that str object (argv.State)
_excepthook = None  # the interpreter's own sys.excepthook (a builtin) as the runner started: cprint runs it
_default_excepthook = None  # the hook that is python3's default one (the runner's own, else the above)
_module_lock = _thread.RLock()  # held while a runner module's code first runs (_module)
# imports.py's own: the import system asks for it (StdlibHook.find_spec) in
# whatever thread imports, and that thread may hold an import another
# thread's module load, under _module_lock, waits for. Its load asks for no
# other runner module, so this lock is never held waiting for the other.
_imports_lock = _thread.RLock()
_module_loading = set()  # the names of those modules
_boot_ask = ""  # EVALHOST_BOOT: the host asks for runner.py's bytecode (bytecode.py)
_OWN_DIRS = (_HERE, os.path.join(_HERE, "__pycache__"))  # sys.path[0] under python3 runner.py, or its bytecode


def _cache_entry(name, src):
    """src as linecache keeps a file: every line ends in a newline, the last
    one too (3.11 and 3.12 put the carets under a last line without one a
    column too far right)."""
    lines = src.splitlines(True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    return (len(src), None, lines, name)


# Rich output and errors load their module on first use: nothing at start-up.


def display(*objs, **kwargs):
    """Show objects as rich output (the IPython display protocol)."""
    return _module("display").display(*objs, **kwargs)


def update_display(obj, *, display_id, **kwargs):
    """Replace every earlier output carrying display_id with obj."""
    return _module("display").update_display(obj, display_id=display_id, **kwargs)


def clear_output(wait=False):
    """Clear the cell's output; with wait=True, when the next output arrives."""
    _module("display").emit_clear(bool(wait))


def _flush_figures():
    if "matplotlib.pyplot" in sys.modules:
        if _ipython_mode and _module("ipy_full").inline_figures():
            return
        _module("display").flush_figures()


def _send_error(exc, only=False, exit=False, reported=False):
    _module("tracebacks").send_error(exc, only, exit, reported=reported)


def _traceback_lines(exc, only=False, hints=True):
    return _module("tracebacks").traceback_lines(exc, only, hints=hints)


# --- the runner's own imports (imports.py) ---------------------------------


def _own(name):
    """The module name for the runner's own use: sys.modules' when imported
    (whoever imported it), else imported from where the interpreter found
    modules at start-up, never from the cwd, '' or a directory a cell
    added (imports.py). Every import the runner does after start-up, of a
    module that is neither built in nor imported before the cwd joined
    sys.path, goes through here."""
    mod = sys.modules.get(name)
    if mod is not None and not getattr(getattr(mod, "__spec__", None), "_initializing", False):
        return mod  # (a module another thread is still running goes to the import system, which waits)
    return _imports().load(name)


def _imports():
    """imports.py (the warm-up's thread and a cell's may ask at once)."""
    return _module("imports")


def _own_reports():
    """The errors the interpreter reports itself (a thread's, a __del__'s)
    are formatted with the runner's own imports: 3.13's threading and sys
    excepthooks import traceback (and, for a line with wide characters,
    unicodedata) where sys.path says, the cwd first, 3.14's unraisablehook
    too. Each default is replaced, its original name (__excepthook__) too,
    so `hook is sys.__excepthook__` holds and a cell that restores one
    gets this one. Both are kept (_excepthook, _default_excepthook): a
    cell may set sys.__excepthook__ too."""
    global _excepthook, _default_excepthook
    _excepthook = _default_excepthook = getattr(sys, "__excepthook__", None)
    for name in ("excepthook", "unraisablehook"):
        default = getattr(sys, "__%s__" % name, None)
        if default is not None and getattr(sys, name) is default:  # not a sitecustomize's own
            hook = _own_hook(default, name)
            setattr(sys, name, hook)
            setattr(sys, "__%s__" % name, hook)
            if name == "excepthook":
                _default_excepthook = hook
    default = getattr(_thread, "_excepthook", None)  # threading.excepthook's, taken as threading loads
    if default is not None:
        hook = _thread._excepthook = _own_hook(default, "excepthook")
        threading = sys.modules.get("threading")  # imported as the interpreter started (site, a .pth file)
        if threading is not None and threading.excepthook is default:
            threading.excepthook = hook
            if hasattr(threading, "__excepthook__"):  # 3.10+
                threading.__excepthook__ = hook


def _own_hook(default, name):
    def hook(*args):
        call = getattr(_imports(), "call", None)
        if call is None:  # imports.py is loading in this thread (a collection ran a __del__)
            return default(*args)
        return call(default, *args)

    hook.__name__ = hook.__qualname__ = name
    hook.__wrapped__ = default  # the interpreter's own: asfile.display runs it
    return hook


# --- IPython compatibility (ipy_*.py, each loaded on first use) ----------


def _module(name):
    """Load <name>.py beside this file once, as _evalhost_<name>, with _core set.

    The IPython compatibility is split by feature so a cell loads only what
    it uses: ipy_rewrite (magic rewriter), ipy_system (shell escapes),
    ipy_magics, ipy_capture, ipy_shell (get_ipython), ipy_display (the
    IPython import hook's work) and ipy_full (EVALHOST_IPYTHON=1).
    """
    full = "_evalhost_" + name
    mod = sys.modules.get(full)
    if mod is not None and full not in _module_loading:
        return mod
    # One load at a time, its module in sys.modules as its code runs (that
    # code may ask for it): another thread waits here until the code has
    # run (it got the module half run: display had no display), the
    # loading thread itself gets it as it stands, as an import cycle does.
    with _imports_lock if name == "imports" else _module_lock:
        mod = sys.modules.get(full)
        if mod is None:
            mod = _load_module(name, full)
    return mod


def _load_module(name, full):
    if _loader is not None:
        path, code = _loader(_HERE, name)
    else:  # started as `python core.py`
        path = os.path.join(_HERE, name + ".py")
        with open(path, "rb") as f:
            code = compile(f.read(), path, "exec", 0, True, 0)  # as runner.py's _load
    mod = type(sys)(full)
    mod.__file__ = path
    _give_spec(mod, path)
    mod._core = sys.modules.get("_evalhost_runner") or sys.modules[__name__]
    _RUNNER_FILES.add(path)
    _module_loading.add(full)  # before sys.modules has it, so no thread takes it without the lock
    try:
        sys.modules[full] = mod
        exec(code, mod.__dict__)
    except BaseException:
        sys.modules.pop(full, None)
        raise
    finally:
        _module_loading.discard(full)
    return mod


def _give_spec(mod, path):
    """A spec and loader for a runner module, as an imported module has:
    3.15's linecache warns (DeprecationWarning) of a module without, for
    each of its frames in a traceback it formats, and a cell's
    warnings.simplefilter('error') made the runner's report of the cell's
    error "traceback unavailable"."""
    loader = _external.SourceFileLoader(mod.__name__, path)
    mod.__loader__, mod.__spec__ = loader, _bootstrap.ModuleSpec(mod.__name__, loader, origin=path)


def _after_fork_child():
    """A forked child loads afresh the runner modules another thread was
    loading; the runner's threads are not in it."""
    global _module_lock, _imports_lock
    _own_threads[0] = 0
    # A load under way in another thread never ends here: its module goes,
    # to be loaded afresh, and so does the lock that thread held.
    if not _module_lock._is_owned():
        _module_lock = _thread.RLock()
        _forget_loading(lambda full: full != "_evalhost_imports")
    if not _imports_lock._is_owned():
        _imports_lock = _thread.RLock()
        _forget_loading(lambda full: full == "_evalhost_imports")


def _forget_loading(which):
    for full in [f for f in _module_loading if which(f)]:
        sys.modules.pop(full, None)
        _module_loading.discard(full)


def _before_fork():
    forks = sys.modules.get("_evalhost_forks")
    if forks is None or "_evalhost_forks" in _module_loading:
        # A fork must not wait for a load under way in another thread,
        # which may wait for what this thread does after the fork.
        if not _module_lock.acquire(False):
            return
        try:
            forks = _module("forks")
        finally:
            _module_lock.release()
    forks.before()


# The frames pipe and the marks (wire.py): loaded now, as the frame writers
# are bound here, so core's calls of them cost what calls of its own do.
_wire = _module("wire")
_frame, _send, _warn = _wire._frame, _wire._send, _wire._warn
_ack_interrupt = _wire._ack_interrupt

# The cells' streams and what flushes them first (stdio.py): loaded now too.
_stdio = _module("stdio")
_flush_std = _stdio.flush_std


def get_ipython():
    """A small stand-in for IPython's shell: magics, system, user_ns, display_pub."""
    return _module("ipy_shell").shell()


def _maybe_magic(src):
    """Cheap pre-check: could src hold a magic, a shell escape or help (x?)?
    Then ipy tokenizes."""
    if "%" not in src and "!" not in src and "?" not in src:
        return False
    for line in src.split("\n"):
        c = line.lstrip()[:1]
        if (c and c in "%!?") or "=!" in line or "= !" in line or "=%" in line or "= %" in line or line.rstrip().endswith("?"):
            return True
    return False


class _IPythonHook:
    """Meta-path hook: routes IPython.display into frames, or serves a shim without IPython.

    It only looks at IPython's own module names, so other imports pay one
    set lookup; the work is in ipy_display.py and happens when user code imports IPython.
    """

    names = frozenset(
        ("IPython", "IPython.display", "IPython.core", "IPython.core.display",
         "IPython.core.display_functions", "IPython.core.getipython", "IPython.utils",
         "IPython.utils.capture", "matplotlib_inline.backend_inline", "matplotlib.pyplot")
    )

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name not in cls.names:
            return None
        return _module("ipy_display").find_spec(name, path, target)


# --- requests -------------------------------------------------------------


class _ScanContext:
    """What _json's scanner reads of a JSONDecoder: each attribute any
    version's reads (3.15 added array_hook; one missing and the runner
    could not start)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    array_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float
    memo = {}


_scan = _json.make_scanner(_ScanContext())


def _held():
    """Whether a script's signal handler raised between cells, for the
    next cell to raise (handlers.py; loaded once a cell sets a handler)."""
    h = sys.modules.get("_evalhost_handlers")
    return h is not None and h.pending is not None


def _decode(line):
    """Parse one request line; raise ValueError saying what is wrong."""
    s = line.decode("utf-8")
    start = 0 if s[:1] == "{" else len(s) - len(s.lstrip())
    try:
        obj, end = _scan(s, start)
    except Exception:
        obj, end = None, -1
    if end < 0 or s[end:] != "\n" and s[end:].strip():
        _own("json").loads(s)  # raises with a precise message
        raise ValueError("trailing data after the JSON object")
    if type(obj) is not dict:
        raise ValueError("a request must be a JSON object")
    return obj


def _serve():
    """Read requests until exit or EOF (the host is gone)."""
    raw = _wire.Requests()
    raw.on_idle = _on_idle
    reqs = io.BufferedReader(raw, 1 << 16)  # read where wire.take_fds moved it
    cell = None  # cells.Cell, once the first request has loaded cells
    while True:
        line = reqs.readline()
        if not line:
            _leave()
            return
        if not line.strip():
            continue
        try:
            req = _decode(line)
        except ValueError as e:
            _warn("bad request line ignored (%s): %r" % (e, line[:200]))
            continue
        kind = req.get("type", "execute")
        if kind == "exit":
            _leave()
            return
        if kind != "execute":
            qid = _q(req["id"]) if type(req.get("id")) is str else None
            _warn('unknown request type %r ignored: use "execute" or "exit"' % (kind,), qid)
            continue
        if cell is None:
            cell = _module("cells").Cell
        cell(req)()


# --- the warm-up (warm.py, once the runner has been idle) -----------------


def _start_thread(fn):
    """Start one of the runner's own threads with every signal blocked from
    birth (a thread takes its creator's mask), so the kernel gives a signal
    sent to the process to the main thread, as in python3, where a cell's
    handlers run. Had a thread here taken one while the main thread held it
    blocked (wire's _dup2_over), its handler would still run there, cutting
    into what the block was for. Not a fault's: POSIX leaves a fault whose
    signal is blocked undefined (Linux kills at once, past -X faulthandler)."""
    sigs = _signal.valid_signals() - {getattr(_signal, n) for n in ("SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL") if hasattr(_signal, n)}
    old = _signal.pthread_sigmask(_signal.SIG_BLOCK, sigs)
    _own_threads[0] += 1
    try:
        _thread.start_new_thread(_own_thread, (fn,))
    except BaseException:
        _own_threads[0] -= 1
        raise
    finally:
        _signal.pthread_sigmask(_signal.SIG_SETMASK, old)


_own_threads = [0]  # how many of the runner's own threads live (forks.py)


def _own_thread(fn):
    try:
        fn()
    finally:
        _own_threads[0] -= 1


def _on_idle():
    """The first wait for a request starts the warm-up's thread, off a
    one-shot run's way: a run of one cell has it and the exit in the pipe
    before it first reads, and it never warms up, but starting the thread
    (and blocking and restoring the signal mask around it) cost ~0.1 ms
    before its first cell. A run of several cells starts it after its first
    one: the host sends each cell once the one before it has ended, and the
    thread then starts after whatever that cell did to the process (a
    limit, a replaced _thread function). Best effort, as the warm-up
    itself: a cell may have left no room for a thread (RLIMIT_AS,
    RLIMIT_NPROC), and the runner must still read the next request rather
    than die of "can't start new thread"."""
    try:
        _start_thread(_warm)
    except Exception:
        pass


def _warm():
    """The warm-up's thread: it loads warm.py and imports what the first
    error needs once the runner has been idle for WARM_QUIET (_quiet). A
    one-shot run's cells and its exit come back to back, so it never loads
    it. Best effort: a failure here shows up, if at all, where it is used."""
    try:
        nap = _thread.allocate_lock()
        nap.acquire()
        seen = _quiet(nap)  # before the load, which a one-shot run never gets to
        _module("warm").warm(nap, seen)
    except Exception:
        pass


def _quiet(nap):
    """Wait until a WARM_QUIET spell passes without a request; the current
    cell then. A spell counts only if it began with no cell running: one
    that ended a moment before the spell's end left the runner busy, and
    the next cell, already sent, may be a moment from starting."""
    seen, busy = _wire._cur, _wire._cur.running
    while True:
        nap.acquire(True, WARM_QUIET)  # never released: a sleep without importing time
        cur = _wire._cur
        if cur is seen and not busy and not cur.running:
            return cur
        seen, busy = cur, cur.running


# --- signals --------------------------------------------------------------


# _leaving: the runner is exiting, and an interrupt that comes before the
# exit takes SIGINT itself (_exit_fast) is for the exit: kept in
# _exit_interrupt rather than ignored, or the host's one SIGINT would be lost.
_leaving = False
_exit_interrupt = False


def _leave():
    global _leaving
    _leaving = True


def _on_sigint(signum, frame):
    """KeyboardInterrupt while a cell runs; ignored while idle, kept for the
    exit once the runner is leaving."""
    global _exit_interrupt
    cell = _wire._cur
    if not cell.running and _leaving:
        _exit_interrupt = True
        return
    if cell.running:
        cell.interrupted = True
        _ack_interrupt()
        if cell.deferring:
            cell.deferred = True
            return
        raise KeyboardInterrupt


# The host's wake-up after an interrupt (frames doc, "interrupted"): a real-time
# signal nothing else uses, whose handler does nothing. Its delivery ends a
# blocking call in the main thread, and CPython then runs a pending SIGINT.
_WAKE = getattr(_signal, "SIGRTMIN", 0) and _signal.SIGRTMIN + 6


def _on_wake(signum, frame):
    pass


# --- start-up -------------------------------------------------------------


def _compiled(path):
    """The code of a helper file: the runner's own (the prelude) through the
    bootstrap's bytecode cache, as core.py itself is loaded, since compiling
    it cost about 2 ms of every start; any other file compiled afresh."""
    if _loader is not None and os.path.dirname(path) == _HERE:
        return _loader(_HERE, os.path.basename(path)[: -len(".py")])[1]
    with open(path, "rb") as f:
        return compile(f.read(), path, "exec", 0, True)


def _sweep_cache():
    """Remove the <cache>.<pid>.tmp files runner.py's bytecode-cache writes
    and bytecode.py's left (killed before their rename): regular files of this user's whose
    pid no longer runs. A live writer's stays (two runners may write one
    cache, each its own file); a writer that took a pid just found gone
    loses its file and only misses writing the cache. Here, not in
    runner.py, which is compiled at every start. ~10 us (listdir); what
    fails (an audit hook may refuse a call) leaves a file for a later start."""
    pycache = os.path.join(_HERE, "__pycache__")
    try:
        names = [n for n in os.listdir(pycache) if n[-4:] == ".tmp"]
    except Exception:
        return
    for name in names:
        stem, _, pid = name[:-4].rpartition(".")
        if stem[-4:] not in (".evh", ".pyc") or not (pid.isascii() and pid.isdigit()):
            continue
        path = os.path.join(pycache, name)
        try:
            os.kill(int(pid), 0)
            continue  # it runs (PermissionError: another user's process)
        except ProcessLookupError:
            try:
                st = os.lstat(path)
                if st.st_uid == os.geteuid() and st.st_mode & 0o170000 == 0o100000:  # a regular file
                    os.unlink(path)
            except Exception:
                pass
        except Exception:
            pass


def _exec_file(path, what, source=None):
    """Exec a helper file into the user namespace; report failures as warnings.

    source, when given, is the file's content as its caller read and
    checked it (an extension module, modules.py): path only names it.
    """
    saved = sys.stdout, sys.stderr
    buf = io.StringIO()
    # Its own __file__ while it runs, and neither it nor its docstring
    # after: __main__'s __doc__ is the script's (None without one), which
    # argparse's description=__doc__ shows.
    kept = {k: _ns[k] for k in ("__file__", "__doc__") if k in _ns}
    try:
        if source is None:
            code = _compiled(path)
        else:
            code = compile(source, path, "exec", 0, True)
        sys.stdout = sys.stderr = buf
        _ns["__file__"] = path
        _wire._loading = "%s %s" % (what, path)
        exec(code, _ns)
    except BaseException as e:
        sys.stdout, sys.stderr = saved
        only = isinstance(e, SyntaxError) and e.filename == path
        try:
            text = "\n".join(_traceback_lines(e, only))
        except Exception:
            text = "%s: %s" % (type(e).__name__, e)
        _warn("%s %s failed to load: %s" % (what, path, text))
    finally:
        sys.stdout, sys.stderr = saved
        _wire._loading = ""
        for k in ("__file__", "__doc__"):
            if k in kept:
                _ns[k] = kept[k]
            else:
                _ns.pop(k, None)
    printed = buf.getvalue()
    if printed:
        _warn("%s %s printed at load: %s" % (what, path, printed[:4000]))


def _python_version():
    v = sys.version_info
    s = "%d.%d.%d" % v[:3]
    if v.releaselevel != "final":
        s += v.releaselevel[0] + str(v.serial)
    return s


def _take_fds():
    """fd 3 (frames) and fd 0 (requests) become the runner's alone: neither
    is inherited, and user code sees /dev/null on fd 0, or the descriptor
    EVALHOST_STDIN names, a script's stdin (host.Options.Stdin). _setup
    then moves both out of the cells' way (wire.take_fds)."""
    try:
        os.set_inheritable(3, False)
    except OSError:
        sys.stderr.write(
            "evalhost runner: fd 3 (the frames pipe) is not open; "
            "runner.py is started by evalhost, not by hand\n"
        )
        sys.exit(2)
    _wire._nonce = os.environ.pop("EVALHOST_SYNC_NONCE", "").encode()
    global _boot_ask
    _boot_ask = os.environ.pop("EVALHOST_BOOT", "")
    _wire._requests = os.dup(0)
    given = os.environ.pop("EVALHOST_STDIN", "")
    why = os.environ.pop("EVALHOST_STDIN_WITHHELD", "")
    withheld = given == "withheld"
    src = int(given) if given.isdigit() and given != "0" else os.open(os.devnull, os.O_RDONLY)
    os.dup2(src, 0)
    os.close(src)
    _stdio.given = bool(given) and not withheld
    _stdio.withheld = (why or "evalhost does not give it one") if withheld else ""


def _user_path():
    """The runner's own directory must not shadow user imports; where the
    interpreter found modules before the cwd joined is kept for _own.
    Under python3 -I or -P neither the cwd nor '' joins, as python3 puts
    neither the script's directory nor the cwd there (argv.safe_path)."""
    global _start, _cwd_entry
    here = os.getcwd()
    _start = (tuple(sys.path), here, tuple(sys.meta_path))
    sys.path[:] = [p for p in sys.path if p and os.path.abspath(p) not in _OWN_DIRS]
    if sys.flags.isolated or getattr(sys.flags, "safe_path", False):
        return
    sys.path.insert(0, here)
    _cwd_entry = here  # argv.py takes this very entry off for a script's run
    # As IPython: '' (the current directory, wherever os.chdir takes it)
    # before site-packages, so a cell can import from a directory it chdir'd to.
    i = next((i for i, p in enumerate(sys.path) if os.path.basename(p) in ("site-packages", "dist-packages")), 1)
    sys.path.insert(i, "")


def _user_namespace():
    """A fresh __main__ for the cells, with IPython's history names and builtins."""
    global _ns
    main = type(sys)("__main__")
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    _ns = main.__dict__
    # As the interactive interpreter has it, not the runner's own path; a
    # request's "argv" sets it for a script's cells.
    sys.argv = [""]

    builtins.display = display
    builtins.get_ipython = get_ipython
    _ns.update(In=[""], Out={}, _="", __="", ___="", _i="", _ii="", _iii="", _i00="")
    _ns["_ih"], _ns["_oh"] = _ns["In"], _ns["Out"]
    if not _stdio.given:
        builtins.input = _stdio.deny_stdin
    builtins.StdinNotImplementedError = _stdio.StdinNotImplementedError


def _setup():
    _take_fds()
    _stdio.take()
    _wire.take_fds()  # once stdio knows whether fd 2 is fd 1's pipe; before any thread
    _own_reports()
    _user_path()
    _user_namespace()
    _stdio.patch_writers()
    os.register_at_fork(after_in_child=_after_fork_child)
    if sys.version_info >= (3, 12):  # its fork warns of threads, the runner's too (forks.py)
        os.register_at_fork(before=_before_fork)
    _signal.signal(_SIGINT, _on_sigint)
    if _WAKE:
        _signal.signal(_WAKE, _on_wake)
    if os.environ.get("EVALHOST_IPYTHON") == "1":
        _start_ipython()  # before Agg's default: it looks for a MPLBACKEND of the user's
    else:
        sys.meta_path.insert(0, _IPythonHook)
    os.environ.setdefault("MPLBACKEND", "Agg")
    _stdio.StdlibHook.install()

    prelude = os.path.join(_HERE, "prelude.py")
    if os.path.exists(prelude):
        _exec_file(prelude, "prelude")
    if os.environ.get("EVALHOST_MODULES"):
        _module("modules").load_modules()
    _hidden.update(_ns)
    if _ipython_mode:
        _module("ipy_full").hide_startup_names(_hidden)

    # Before ready, though its start costs ready ~0.2-0.3 ms (the thread, and
    # the GIL it takes as the main thread writes): the runner is not ready
    # without it, and a thread the system refuses (RLIMIT_NPROC, a pids
    # cgroup at its limit) must fail the start, not the first cell with
    # the runner's own traceback.
    _stdio.start_flusher()
    # What start-up made lives as long as the runner: later collections (the
    # one at exit included) need not traverse it again.
    import gc

    gc.freeze()


_hidden = set()  # names %who, %whos and %reset leave alone: start-up names


def _start_ipython():
    """Full IPython mode; an IPython that cannot start fails every cell clearly."""
    global _ipython_mode
    _ipython_mode = True
    try:
        _module("ipy_full").start_full()
    except BaseException as e:
        _module("ipy_full").full_error = "%s: %s" % (type(e).__name__, e)


def main(boot_file=None):
    if boot_file:
        _RUNNER_FILES.add(boot_file)
    if __name__ != "__main__":  # a __main__ needs none
        _give_spec(sys.modules[__name__], _FILE)
    _setup()
    _send(_frame("ready", runner=_q(RUNNER_VERSION), python=_q(_python_version()), pid=os.getpid(),
                 executable=_q(sys.executable or ""), marks="true", wake=_WAKE))
    # The first request is an execute, which needs cells: loaded now, while
    # the host reads ready and sends it, not after it came (a one-shot run
    # waited ~0.2 ms for it between its cell and its `started`). Its objects
    # live as long as the runner, so they are frozen with start-up's: the
    # exit's walk of gc.get_objects() took ~0.4 ms, ~0.1 ms without them.
    _module("cells")
    _sweep_cache()
    if _boot_ask:  # once for an interpreter: the next start runs it (runner/boot.go)
        _module("bytecode").write(_boot_ask, boot_file)
        del sys.modules["_evalhost_bytecode"]  # as a start from the bytecode has them
    import gc

    gc.freeze()
    try:
        _serve()
    finally:
        _stdio.stop()
    _exit_fast()


def _join_threads():
    """Wait for non-daemon threads; what ends the wait (a KeyboardInterrupt,
    a debugger's BdbQuit) is reported as the interpreter's exit reports it
    (PyErr_WriteUnraisable: the last line "Type: " even without a message;
    3.13's "on threading shutdown", with no carets; 3.15's through the
    hook)."""
    threading = sys.modules.get("threading")
    if threading is None:
        return
    try:
        if _exit_interrupt and any(not t.daemon and t.is_alive() for t in threading.enumerate()
                                   if t is not threading.main_thread()):
            raise KeyboardInterrupt  # it came as the runner left, before the wait
        threading._shutdown()
    except BaseException as e:
        if sys.version_info >= (3, 15):
            _shutdown_unraisable(e)
            return
        lines = _traceback_lines(e, hints=False)  # the unraisable report adds no suggestion
        try:
            bare = str(e) == "" and not getattr(e, "__notes__", None)
        except Exception:
            bare = False
        if bare and lines:
            lines[-1] += ": "
        if sys.version_info >= (3, 13):  # its C traceback printer shows no carets
            head = "Exception ignored on threading shutdown:\n"
            # (3.14's traceback gives a line of spaces under a def's line)
            lines = [ln for ln in lines if not (ln and ln.strip(" ^~") == "")]
        else:
            head = "Exception ignored in: %r\n" % threading
        text = head + "\n".join(lines) + "\n"
        try:
            sys.stderr.write(text)
            sys.stderr.flush()
        except Exception:
            pass


def _shutdown_unraisable(e):
    """python3.15 reports what ended its wait for threads through
    sys.unraisablehook, whose default formats it as Python's traceback
    does (carets, a bare "KeyboardInterrupt"); a script's own hook gets it."""
    u = _stdio.unraisable_args(e, "Exception ignored on threading shutdown", None)
    if u is None:
        return
    hook = getattr(sys, "unraisablehook", None)
    try:
        _module("tracebacks").exit_unraisable(u, sys.__unraisablehook__ if hook is None else hook)
    except BaseException:  # the default hook failed too (a sys.stderr that fails): python3 clears it
        pass


def _clear_module_dict(d):
    """Clear the cells' namespace as CPython clears a module that outlived
    the GC (_PyModule_ClearDict): names with one leading underscore first,
    then the rest, each set to None in order; __builtins__ stays, which a
    finalizer defined in a cell needs before 3.10 (its print was a
    NameError). python3 itself usually lets the GC collect __main__'s dict
    with every global in place; not done here, as the namespace was frozen
    with start-up's objects (gc.freeze)."""
    for key in [k for k in d if type(k) is str and k[:1] == "_" and k[1:2] != "_"]:
        if d.get(key) is not None:
            d[key] = None
    for key in [k for k in d if k != "__builtins__"]:
        if d.get(key) is not None:
            d[key] = None


def _exit_warnings():
    """From here to the exit, warnings show as at python3's teardown
    (tracebacks.show_exit_warning), loaded only if one is shown: loading
    tracebacks for every exit took ~0.2 ms wherever the interpreter's start
    had imported warnings (a site .pth's imports)."""
    w = sys.modules.get("warnings")
    if w is None or not callable(getattr(w, "_showwarnmsg", None)):
        return
    w._showwarnmsg = lambda msg: _module("tracebacks").show_exit_warning(msg)


def _exit_fast():
    """Leave as Python's own exit does, minus the interpreter's teardown: that
    costs about a third of a one-shot `evalhost run -c pass` (issue 16). Non-daemon
    threads are joined and atexit handlers run, as at a normal exit; the cells'
    namespace is cleared and collected so its objects' finalizers run (an open
    file flushes), files left open elsewhere are flushed, and so are the std
    streams. What all this prints is the last cell's output to the host
    (host/exitout.go): the cell's position marks go on, so stdout and
    stderr keep their order there as in the cell."""
    _wire._cur.positioning = True
    status = _report_held()
    # SIGINT, which the host sends when the last cell's time ends during the
    # exit, stops the wait for threads and an atexit handler, as Ctrl-C does
    # at python3's exit; the rest of the exit is not to be cut.
    _signal.signal(_SIGINT, _signal.default_int_handler)
    prev = sys.unraisablehook
    sys.unraisablehook = lambda u: _module("tracebacks").exit_unraisable(u, prev)
    import atexit

    # A debugger stepping when the script ended traces the exit's
    # threading._shutdown and atexit handlers, as python3's
    # (stdio.ended_trace), never the runner's own frames: from here to
    # the trace's end the runner calls nothing else written in Python
    if _stdio.ended_trace is not None:
        sys.settrace(_stdio.ended_trace)
    try:
        _join_threads()
        atexit._run_exitfuncs()
    except BaseException:
        # Before 3.10 _run_exitfuncs raises the last handler's exception
        # again after reporting it; the interpreter's own exit drops it.
        pass
    finally:
        if _stdio.ended_trace is not None:
            sys.settrace(None)
        _signal.signal(_SIGINT, _signal.SIG_IGN)
    # python3's exit flushes sys.stdout and sys.stderr here, before the
    # modules go, and exits 120 when it cannot, unless an uncaught
    # KeyboardInterrupt ended the script: it dies of SIGINT then.
    if not _stdio.exit_flush() and not _stdio.interrupt_ended:
        status = 120
    _exit_warnings()
    _clear_module_dict(_ns)
    import gc
    gc.collect()
    # A file still open in a module's globals is flushed, as the teardown's
    # clearing of modules would have; start-up's objects are frozen out of
    # get_objects, so this walks only what the cells made. The C base's
    # isinstance runs no Python code (io.IOBase's ABC check does), which
    # 3.14's breakpoint(), tracing through sys.monitoring past the
    # settrace(None) above, would step into where python3's exit has no
    # Python code left to trace.
    for obj in gc.get_objects():
        if isinstance(obj, io._io._IOBase):
            try:
                if not obj.closed:
                    obj.flush()
            except Exception:
                pass
    _flush_std()
    os._exit(status)


def _report_held():
    """What a script's signal handler raised after the last cell ended
    (handlers.py), reported as python3 reports an uncaught exception at
    the script's end, before its exit runs; the exit's status (0 when
    nothing was raised). From here on handlers raise where they land, the
    script's own functions back in place."""
    h = sys.modules.get("_evalhost_handlers")
    e = h.take() if h is not None else None
    if e is None:
        return 0
    try:
        return _module("tracebacks").report_at_exit(e)
    finally:
        e = None


if __name__ == "__main__":
    main()  # also runnable directly: python core.py
