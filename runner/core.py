"""evalhost runner core: the Python end of the evalhost runner protocol.

Loaded by runner.py (the bootstrap the host starts as `python runner.py`) with fd 0 = requests (NDJSON),
fd 1/2 = raw stdout/stderr pipes and fd 3 = frames (NDJSON). The protocol is
written down in the Go package frames (frames/doc.go). Stdlib only, and no
module beyond what the interpreter already loads at start-up is imported
before `ready`: start time is part of the contract.
"""

import _ast
import _json
import _signal
import _thread
import builtins
import io
import os
import sys

RUNNER_VERSION = "1.1"
MAX_LINE = 32 << 20  # frames.DefaultMaxLine
FLUSH_INTERVAL = 0.05

_FILE = sys._getframe().f_code.co_filename
_RUNNER_FILES = {_FILE}  # frames from these files never show in tracebacks
_HERE = os.path.dirname(os.path.abspath(__file__))
_PID = os.getpid()
_AST_FLAGS = _ast.PyCF_ONLY_AST | _ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
_RUN_FLAGS = _ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
_CO_COROUTINE = 0x80
_SIGINT = _signal.SIGINT

_q = _json.encode_basestring_ascii
_os_write = os.write

# Per-process state, set up by _setup and the cell loop.
_frames_fd = 3
_req_fd = 0
_nonce = b""
_ns = {}
_out = None
_err = None
_count = 0
_cur_id = ""
_qid = '""'
_in_cell = False
_ack = b""  # this cell's "interrupted" frame line
_ack_owed = False  # the SIGINT handler could not write it (a send was under way)
_positioning = False  # a request is being handled: its rich frames get position marks
_interrupted = False
_forked = False
_loop = None
_sources = {}
_loader = None  # set by runner.py: _loader(dir, name) -> (path, code object)
_ipy_mod = None  # ipy.py, loaded on first use
_capture = None  # a list while %%capture collects displays instead of sending them
_pre_cell = []  # callables run before each cell (autoreload, get_ipython().events)
_post_cell = []  # callables run after each cell, with its status
_ipython_mode = False  # EVALHOST_IPYTHON=1: cells run through IPython's InteractiveShell
_send_lock = _thread.allocate_lock()
_fork_lock = _thread.allocate_lock()
_gate = _thread.allocate_lock()  # held by the main thread while idle
_stop = _thread.allocate_lock()  # held until the flusher must stop
_flusher_done = _thread.allocate_lock()


# --- frames ---------------------------------------------------------------


_POSITIONED = tuple('{"type":"%s"' % t for t in ("display", "update_display", "clear_output", "result", "error", "input"))


def _send(line):
    """Write one frame line to fd 3, whole, or not at all if it is too long."""
    if _forked:
        return  # a fork() child of a cell: only the runner itself speaks
    data = line.encode()
    if len(data) > MAX_LINE:
        data = _warning_line(
            "a %s frame of %d bytes exceeds the %d-byte line limit and was dropped; "
            "write large data to a file instead" % (line[9:line.find('"', 9)], len(data), MAX_LINE)
        ).encode()
    # A frame that has a place among the cell's text is preceded by a
    # position mark on fd 1 and fd 2 (frames doc, "Order"), so the host can
    # put it exactly there; a dropped frame gets none.
    positioned = _positioning and _nonce and len(data) <= MAX_LINE and line.startswith(_POSITIONED)
    if positioned:
        _flush_ours()
    _write_frame(data, positioned, hold_sigint=positioned or len(data) > 4096)


def _write_frame(data, positioned, hold_sigint):
    """Write one frame line to fd 3 under the send lock, after position marks
    on fd 1 and fd 2 when positioned. With hold_sigint, SIGINT is held off
    around the lock, not inside it, so an interrupt that was held is handled
    with the lock free and acknowledged at once."""
    old = _signal.pthread_sigmask(_signal.SIG_BLOCK, (_SIGINT,)) if hold_sigint else None
    try:
        with _send_lock:
            if positioned:
                pos = b"\x00\x1eEVH" + _nonce + b":\x02\x1e\x00"
                _mark(1, pos)
                _mark(2, pos)
            _pay_ack()  # first: an owed ack must not follow the cell's done
            _write_frame_bytes(data)
    except BrokenPipeError:
        os._exit(1)  # the host is gone; nobody is left to report to
    finally:
        if old is not None:
            _signal.pthread_sigmask(_signal.SIG_SETMASK, old)


def _warning_line(message, qid=None):
    if qid:
        return '{"type":"warning","id":%s,"message":%s}\n' % (qid, _q(message))
    return '{"type":"warning","message":%s}\n' % _q(message)


def _warn(message, qid=None):
    _send(_warning_line(message, qid))


def _json_value(v):
    if type(v) is str:
        return _q(v)
    import json

    return json.dumps(v, default=repr, separators=(",", ":"))


def _bundle_json(bundle):
    return "{" + ",".join(_q(k) + ":" + _json_value(v) for k, v in bundle.items()) + "}"


def _emit_display(kind, bundle, metadata, display_id):
    if _capture is not None:
        _capture.append((kind, bundle, metadata, display_id))
        return
    _flush_std()
    extra = ""
    if metadata:
        extra += ',"metadata":' + _json_value(metadata)
    if display_id:
        extra += ',"displayId":' + _q(str(display_id))
    _send('{"type":"%s","id":%s,"bundle":%s%s}\n' % (kind, _qid, _bundle_json(bundle), extra))


def _emit_clear(wait=False):
    if _capture is not None:
        _capture.append(("clear_output", wait, None, None))
        return
    _flush_std()
    _send('{"type":"clear_output","id":%s,"wait":%s}\n' % (_qid, "true" if wait else "false"))


def clear_output(wait=False):
    """Clear the cell's output; with wait=True, when the next output arrives."""
    _emit_clear(bool(wait))


# --- IPython compatibility (ipy.py, loaded on first use) ------------------


def _ipy():
    """Load ipy.py once: magics, get_ipython(), the IPython.display bridge."""
    global _ipy_mod
    if _ipy_mod is None:
        if _loader is not None:
            path, code = _loader(_HERE, "ipy")
        else:  # started as `python core.py`
            path = os.path.join(_HERE, "ipy.py")
            with open(path, "rb") as f:
                code = compile(f.read(), path, "exec", 0, True)
        mod = type(sys)("_evalhost_ipy")
        mod.__file__ = path
        mod._core = sys.modules.get("_evalhost_runner") or sys.modules[__name__]
        _RUNNER_FILES.add(path)
        sys.modules[mod.__name__] = mod
        exec(code, mod.__dict__)
        _ipy_mod = mod
    return _ipy_mod


def get_ipython():
    """A small stand-in for IPython's shell: magics, system, user_ns, display_pub."""
    return _ipy().shell()


def _maybe_magic(src):
    """Cheap pre-check: could src hold a magic or shell escape? Then ipy tokenizes."""
    if "%" not in src and "!" not in src:
        return False
    for line in src.split("\n"):
        c = line.lstrip()[:1]
        if c == "%" or c == "!" or "=!" in line or "= !" in line or "=%" in line or "= %" in line:
            return True
    return False


class _IPythonHook:
    """Meta-path hook: routes IPython.display into frames, or serves a shim without IPython.

    It only looks at IPython's own module names, so other imports pay one
    set lookup; the work is in ipy.py and happens when user code imports IPython.
    """

    names = frozenset(
        ("IPython", "IPython.display", "IPython.core", "IPython.core.display",
         "IPython.core.display_functions", "IPython.core.getipython", "IPython.utils",
         "IPython.utils.capture")
    )

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name not in cls.names:
            return None
        return _ipy().find_spec(name, path, target)


# --- requests -------------------------------------------------------------


class _ScanContext:
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = float
    memo = {}


_scan = _json.make_scanner(_ScanContext())


def _decode(line):
    """Parse one request line; raise ValueError saying what is wrong."""
    s = line.decode("utf-8")
    start = len(s) - len(s.lstrip())
    try:
        obj, end = _scan(s, start)
    except Exception:
        obj, end = None, -1
    if end < 0 or s[end:].strip():
        import json

        json.loads(s)  # raises with a precise message
        raise ValueError("trailing data after the JSON object")
    if type(obj) is not dict:
        raise ValueError("a request must be a JSON object")
    return obj


# --- output streams -------------------------------------------------------


class _Stderr(io.TextIOWrapper):
    """stderr that flushes stdout first, so the two interleave as written."""

    def write(self, s):
        _out.flush()
        return io.TextIOWrapper.write(self, s)


class StdinNotImplementedError(NotImplementedError):
    """Raised when a cell asks for interactive input."""


StdinNotImplementedError.__module__ = "builtins"
_NO_STDIN = (
    "input() is not supported: evalhost cells have no interactive stdin; "
    "pass values in code or files instead"
)


def _deny_stdin(prompt=""):
    _flush_std()
    _send('{"type":"input","id":%s,"prompt":%s}\n' % (_qid, _q(str(prompt))))
    raise StdinNotImplementedError(_NO_STDIN)


_deny_stdin.__name__ = _deny_stdin.__qualname__ = "input"


class _NoStdin(io.TextIOBase):
    """sys.stdin: reading fails at once instead of hanging."""

    encoding = "utf-8"
    errors = "strict"
    name = "<stdin>"
    mode = "r"
    newlines = None

    def readable(self):
        return True

    def fileno(self):
        return 0

    def isatty(self):
        return False

    def read(self, size=-1):
        _deny_stdin()

    def readline(self, size=-1):
        _deny_stdin()

    def readlines(self, hint=-1):
        _deny_stdin()


def _deny_getpass(prompt="Password: ", stream=None):
    """getpass.getpass: fails at once, as input() does. The real one opens
    /dev/tty, and a runner in a terminal's background process group stops
    there (SIGTTIN) until the cell times out."""
    _flush_std()
    _send('{"type":"input","id":%s,"prompt":%s}\n' % (_qid, _q(str(prompt))))
    raise StdinNotImplementedError(
        "getpass() is not supported: evalhost cells have no interactive stdin; "
        "read secrets from a file or an environment variable instead"
    )


_deny_getpass.__name__ = _deny_getpass.__qualname__ = "getpass"


def _fix_linecache(lc):
    """Cells run before linecache was imported: give it their source, so
    inspect.getsource, pdb and traceback.print_exc show cell lines."""
    for name, src in _sources.items():
        lc.cache.setdefault(name, (len(src), None, src.splitlines(True), name))


def _fix_getpass(gp):
    gp.getpass = _deny_getpass


class _FixingLoader:
    """Runs a stdlib module's own loader, then adapts the module to cells."""

    def __init__(self, loader, fix):
        self._loader, self._fix = loader, fix

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        self._fix(module)

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _StdlibHook:
    """Meta-path hook for the few stdlib modules cells need adapted, imported
    lazily so start-up imports nothing; other imports pay one dict lookup."""

    fixes = {"linecache": _fix_linecache, "getpass": _fix_getpass}

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        fix = cls.fixes.get(name)
        if fix is None:
            return None
        import _frozen_importlib_external

        spec = _frozen_importlib_external.PathFinder.find_spec(name, path, target)
        if spec is not None and spec.loader is not None:
            spec.loader = _FixingLoader(spec.loader, fix)
        return spec

    @classmethod
    def install(cls):
        for name, fix in cls.fixes.items():
            if name in sys.modules:  # imported at start-up (site, .pth files)
                fix(sys.modules[name])
        sys.meta_path.insert(0, cls)


_last_fd = 0  # the output fd the runner's own streams wrote last in this cell


class _TrackedFileIO(io.FileIO):
    """fd 1 or 2 under sys.stdout/sys.stderr. A write that switches from one
    to the other is preceded by a stream sync, so the host can keep the
    order of the two pipes (frames doc, "Order"). Buffered writers call this
    once per flush, not per print."""

    def write(self, b):
        global _last_fd
        if _last_fd != self._evh_fd:
            if _last_fd:
                _sync_streams()
            _last_fd = self._evh_fd
        return io.FileIO.write(self, b)


def _sync_streams():
    """A position mark on fd 1 and fd 2 and a sync frame: text written before
    it on either pipe reaches the host's consumer before text written after.
    It never flushes: it runs inside a stream's flush."""
    if not (_positioning and _nonce) or _forked:
        return
    _write_frame(('{"type":"sync","id":%s}\n' % _qid).encode(), True, hold_sigint=True)


def _stream(fd, name, cls):
    raw = _TrackedFileIO(fd, "w", closefd=False)
    raw._evh_fd = fd
    raw.name = name
    s = cls(io.BufferedWriter(raw, 1 << 16), encoding="utf-8", errors="backslashreplace", newline="\n")
    s.mode = "w"
    return s


def _flush_std():
    """Flush every Python-level stream that may hold bytes for fd 1/2."""
    for s in (_out, _err, sys.stdout, sys.stderr):
        if s is not None:
            try:
                s.flush()
            except Exception:
                pass


def _flush_ours():
    """Flush only the runner's own streams: safe from another thread."""
    for s in (_out, _err):
        try:
            s.flush()
        except Exception:
            pass


def _flusher():
    """Flush stdout/stderr every FLUSH_INTERVAL while a cell runs."""
    try:
        _signal.pthread_sigmask(_signal.SIG_BLOCK, (_SIGINT,))
        while True:
            _gate.acquire()
            _gate.release()
            if _stop.acquire(True, FLUSH_INTERVAL):
                return
            with _fork_lock:
                if _in_cell:
                    _flush_ours()
    finally:
        _flusher_done.release()


# --- flushing before other writers of fd 1/2 ------------------------------


def _flush_first(fn):
    def wrapper(*args, **kwargs):
        _flush_std()
        return fn(*args, **kwargs)

    wrapper.__name__ = getattr(fn, "__name__", "wrapper")
    wrapper.__qualname__ = wrapper.__name__
    wrapper.__doc__ = getattr(fn, "__doc__", None)
    wrapper.__wrapped__ = fn
    return wrapper


def _write(fd, data):
    if fd == 1 or fd == 2:
        _flush_std()
    return _os_write(fd, data)


_write.__name__ = _write.__qualname__ = "write"
_write.__doc__ = os.write.__doc__


def _before_fork():
    _fork_lock.acquire()
    _flush_std()


def _after_fork_parent():
    _fork_lock.release()


def _after_fork_child():
    global _forked
    _forked = True
    _fork_lock.release()


def _patch_writers():
    os.write = _write
    for name in ("system", "execv", "execve", "posix_spawn", "posix_spawnp"):
        fn = getattr(os, name, None)
        if fn is not None:
            setattr(os, name, _flush_first(fn))
    try:
        import _posixsubprocess

        _posixsubprocess.fork_exec = _flush_first(_posixsubprocess.fork_exec)
        sub = sys.modules.get("subprocess")
        if sub is not None and getattr(sub, "_fork_exec", None) is not None:
            sub._fork_exec = _posixsubprocess.fork_exec
    except ImportError:
        pass
    os.register_at_fork(
        before=_before_fork, after_in_parent=_after_fork_parent, after_in_child=_after_fork_child
    )


# --- signals --------------------------------------------------------------


def _on_sigint(signum, frame):
    """KeyboardInterrupt while a cell runs; ignored while idle."""
    global _interrupted
    if _in_cell:
        _interrupted = True
        _ack_interrupt()
        raise KeyboardInterrupt


# The host's wake-up after an interrupt (frames doc, "interrupted"): a real-time
# signal nothing else uses, whose handler does nothing. Its delivery ends a
# blocking call in the main thread, and CPython then runs a pending SIGINT.
_WAKE = getattr(_signal, "SIGRTMIN", 0) and _signal.SIGRTMIN + 6


def _on_wake(signum, frame):
    pass


def _ack_interrupt():
    """Tell the host its interrupt landed, so it stops its wake-ups (frames
    doc, "interrupted"). The handler may run inside a send, so it never waits
    for the send lock: the frame is then owed, and the send writes it."""
    global _ack_owed
    if _forked or not _ack:
        return
    if _send_lock.acquire(False):
        try:
            _write_frame_bytes(_ack)
        finally:
            _send_lock.release()
    else:
        _ack_owed = True


def _write_frame_bytes(data):
    """Write data to fd 3 whole; the caller holds the send lock."""
    view = memoryview(data)
    while view:
        view = view[_os_write(_frames_fd, view):]


def _pay_ack():
    """Write an interrupted frame owed by the handler; under the send lock."""
    global _ack_owed
    if _ack_owed:
        _ack_owed = False
        _write_frame_bytes(_ack)


# --- display --------------------------------------------------------------

_REPR_METHODS = (
    ("_repr_html_", "text/html"),
    ("_repr_markdown_", "text/markdown"),
    ("_repr_svg_", "image/svg+xml"),
    ("_repr_png_", "image/png"),
    ("_repr_jpeg_", "image/jpeg"),
    ("_repr_json_", "application/json"),
    ("_repr_latex_", "text/latex"),
)
_BINARY = ("image/png", "image/jpeg", "application/pdf")


def _method(obj, name):
    """obj's display method name, as IPython's get_real_method finds it: none
    on classes, nor on objects that answer any attribute (mocks, proxies)."""
    if isinstance(obj, type):
        return None
    try:
        if getattr(obj, "_ipython_canary_method_should_not_exist_", None) is not None:
            return None
        m = getattr(obj, name, None)
    except Exception:
        return None
    return m if callable(m) else None


def _note_repr_failure(obj, name, exc):
    _err.write("display: %s.%s() raised %s: %s\n" % (type(obj).__name__, name, type(exc).__name__, exc))


def _mime_value(mime, v):
    """Return v as it goes on the wire for mime, or None when unusable."""
    if v is None:
        return None
    if isinstance(v, (bytes, bytearray, memoryview)):
        if mime in _BINARY or mime.startswith("image/") and mime != "image/svg+xml":
            import binascii

            return binascii.b2a_base64(bytes(v), newline=False).decode("ascii")
        return bytes(v).decode("utf-8", "replace")
    if isinstance(v, str):
        return v
    if mime == "application/json" or mime.endswith("+json"):
        return v if isinstance(v, (dict, list, int, float, bool)) else None
    return None


def _split_md(v):
    if type(v) is tuple and len(v) == 2 and isinstance(v[1], dict):
        return v
    return v, None


def _format(obj):
    """The IPython display protocol: (bundle, metadata), text/plain always."""
    bundle, meta = {}, {}
    if not isinstance(obj, type):
        m = _method(obj, "_repr_mimebundle_")
        if m is not None:
            try:
                r, md = _split_md(m(include=None, exclude=None))
            except Exception as e:
                _note_repr_failure(obj, "_repr_mimebundle_", e)
                r, md = None, None
            if isinstance(r, dict):
                for mime, v in r.items():
                    v = _mime_value(str(mime), v)
                    if v is not None:
                        bundle[str(mime)] = v
            if md:
                meta.update(md)
        for name, mime in _REPR_METHODS:
            if mime in bundle:
                continue
            m = _method(obj, name)
            if m is None:
                continue
            try:
                v, md = _split_md(m())
            except Exception as e:
                _note_repr_failure(obj, name, e)
                continue
            v = _mime_value(mime, v)
            if v is not None:
                bundle[mime] = v
                if md:
                    meta[mime] = md
    if "text/plain" not in bundle:
        bundle["text/plain"] = repr(obj)
    return bundle, meta


class DisplayHandle:
    """Returned by display(..., display_id=...): update or re-show that output."""

    def __init__(self, display_id=None):
        self.display_id = display_id or os.urandom(16).hex()

    def __repr__(self):
        return "<DisplayHandle display_id=%s>" % self.display_id

    def display(self, obj, **kwargs):
        display(obj, display_id=self.display_id, **kwargs)

    def update(self, obj, **kwargs):
        update_display(obj, display_id=self.display_id, **kwargs)


def _bundle_of(obj, raw, metadata):
    if raw:
        if not isinstance(obj, dict):
            raise TypeError("display(raw=True) takes MIME bundles (dicts), not %s" % type(obj).__name__)
        # Sent as given, as IPython does: any JSON value under any MIME type
        # (structured types such as application/x-omp-status carry dicts),
        # and no text/plain made up from the dict's repr (the protocol's
        # text/plain is then empty, as the gateway backend sends it).
        bundle = {}
        for mime, v in obj.items():
            if isinstance(v, (str, bytes, bytearray, memoryview)):
                v = _mime_value(str(mime), v)
            if v is not None:
                bundle[str(mime)] = v
        bundle.setdefault("text/plain", "")
        meta = {}
    else:
        bundle, meta = _format(obj)
    if metadata:
        meta.update(metadata)
    return bundle, meta


def display(*objs, include=None, exclude=None, metadata=None, transient=None, display_id=None,
            raw=False, clear=False, update=False, **kwargs):
    """Show objects as rich output (the IPython display protocol).

    raw=True takes MIME bundles; display_id=True (or a string) returns a
    DisplayHandle whose update() replaces that output; update=True replaces
    the earlier outputs with display_id; clear=True clears the output first
    (when the new output arrives).
    """
    if not display_id and transient:
        display_id = transient.get("display_id")
    if display_id is True:
        display_id = os.urandom(16).hex()
    if update and not display_id:
        raise TypeError("display(update=True) needs a display_id: the id of the output to replace")
    if clear:
        _emit_clear(True)
    kind = "update_display" if update else "display"
    if not objs and display_id:
        _emit_display(kind, {"text/plain": ""}, None, display_id)  # a placeholder to update later
    for obj in objs:
        if not raw:
            m = _method(obj, "_ipython_display_")
            if m is not None:
                m()
                continue
        bundle, meta = _bundle_of(obj, raw, metadata)
        if include or exclude:
            bundle = {k: v for k, v in bundle.items()
                      if k == "text/plain" or (not include or k in include) and not (exclude and k in exclude)}
        _emit_display(kind, bundle, meta, display_id)
    if display_id:
        return DisplayHandle(display_id)
    return None


def update_display(obj, *, display_id, **kwargs):
    """Replace every earlier output carrying display_id with obj."""
    kwargs["update"] = True
    display(obj, display_id=display_id, **kwargs)


def _flush_figures():
    """Send matplotlib figures left open by the cell as PNG, then close them."""
    plt = sys.modules.get("matplotlib.pyplot")
    if plt is None:
        return
    try:
        nums = plt.get_fignums()
        if not nums:
            return
        import binascii

        for n in nums:
            fig = plt.figure(n)
            buf = io.BytesIO()
            fig.savefig(buf, format="png", bbox_inches="tight")
            png = binascii.b2a_base64(buf.getvalue(), newline=False).decode("ascii")
            _emit_display("display", {"image/png": png, "text/plain": repr(fig)}, None, None)
    except Exception as e:
        _warn("matplotlib figures could not be sent: %s: %s" % (type(e).__name__, e), _qid)
    finally:
        try:
            plt.close("all")
        except Exception:
            pass


# --- errors ---------------------------------------------------------------


def _seed_linecache():
    lc = sys.modules.get("linecache")
    if lc is None:
        return
    for name, src in _sources.items():
        if name not in lc.cache:
            lc.cache[name] = (len(src), None, src.splitlines(True), name)


def _is_runner_file(name):
    """The runner's own files: core, bootstrap, prelude helpers, IPython shims."""
    return name in _RUNNER_FILES or os.path.dirname(name) == _HERE


def _strip_runner(te, seen):
    """Drop runner frames, and frames before the first cell frame, everywhere."""
    if te is None or id(te) in seen:
        return
    seen.add(id(te))
    frames = list(te.stack)
    for i, f in enumerate(frames):
        if f.filename.startswith("<cell "):
            frames = frames[i:]
            break
    te.stack = type(te.stack).from_list([f for f in frames if not _is_runner_file(f.filename)])
    _strip_runner(te.__cause__, seen)
    _strip_runner(te.__context__, seen)
    for sub in getattr(te, "exceptions", None) or ():
        _strip_runner(sub, seen)


def _traceback_lines(exc, only=False):
    import traceback

    _seed_linecache()
    if only:
        text = "".join(traceback.format_exception_only(type(exc), exc))
    else:
        try:
            te = traceback.TracebackException(type(exc), exc, exc.__traceback__, compact=True)
        except TypeError:  # Python < 3.10
            te = traceback.TracebackException(type(exc), exc, exc.__traceback__)
        _strip_runner(te, set())
        text = "".join(te.format())
    return text.rstrip("\n").split("\n")


def _send_error(exc, only=False):
    try:
        evalue = str(exc)
    except Exception:
        evalue = "<unprintable %s>" % type(exc).__name__
    try:
        lines = _traceback_lines(exc, only)
    except Exception as e:  # a broken __str__ or traceback must not lose the error
        lines = ["%s: %s" % (type(exc).__name__, evalue), "(traceback unavailable: %r)" % (e,)]
    _flush_std()
    _send(
        '{"type":"error","id":%s,"ename":%s,"evalue":%s,"traceback":[%s]}\n'
        % (_qid, _q(type(exc).__name__), _q(evalue), ",".join(map(_q, lines)))
    )


def _send_error_lines(ename, evalue, lines):
    _flush_std()
    _send(
        '{"type":"error","id":%s,"ename":%s,"evalue":%s,"traceback":[%s]}\n'
        % (_qid, _q(ename), _q(evalue), ",".join(map(_q, lines)))
    )


def _send_plain_error(ename, evalue):
    _send(
        '{"type":"error","id":%s,"ename":%s,"evalue":%s,"traceback":[%s]}\n'
        % (_qid, _q(ename), _q(evalue), _q("%s: %s" % (ename, evalue)))
    )


class _RequestError(Exception):
    """A request that cannot run; reported as an error of that cell."""


# --- cells ----------------------------------------------------------------


def _await(coro):
    """Run a top-level-await cell on the session's persistent event loop."""
    global _loop
    import asyncio

    if _loop is None or _loop.is_closed():
        _loop = asyncio.new_event_loop()
    asyncio.set_event_loop(_loop)
    task = _loop.create_task(coro)
    try:
        return _loop.run_until_complete(task)
    except BaseException as e:
        if not task.done():
            if isinstance(e, KeyboardInterrupt):
                _at_await(e, task)
            task.cancel()
            try:
                _loop.run_until_complete(task)
            except BaseException:
                pass
        raise


def _at_await(exc, task):
    """An interrupt that landed in the event loop's wait: give it the cell's
    suspended await chain as its traceback, so it shows the cell's line, not
    only asyncio's selector."""
    try:
        import types

        stack, c = [], task.get_coro()
        while c is not None:
            f = getattr(c, "cr_frame", None) or getattr(c, "gi_frame", None)
            if f is None:
                break
            stack.append(f)
            c = getattr(c, "cr_await", None) or getattr(c, "gi_yieldfrom", None)
        tb = None
        for f in reversed(stack):
            tb = types.TracebackType(tb, f, f.f_lasti, f.f_lineno)
        if tb is not None:
            exc.with_traceback(tb)
    except Exception:
        pass


def _apply(req):
    """Apply a request's cwd, env and run id before its cell runs."""
    env = req.get("env")
    if env is not None:
        if type(env) is not dict:
            raise _RequestError('"env" must be an object of names to strings or null')
        for k, v in env.items():
            if v is None:
                os.environ.pop(k, None)
            elif type(v) is str:
                try:
                    os.environ[k] = v
                except ValueError as e:
                    raise _RequestError("cannot set env %r: %s" % (k, e))
            else:
                raise _RequestError('"env" value for %r must be a string or null' % k)
    run = req.get("run")
    if run:
        os.environ["EVALHOST_RUN"] = str(run)
    else:
        os.environ.pop("EVALHOST_RUN", None)
    cwd = req.get("cwd")
    if cwd:
        if type(cwd) is not str:
            raise _RequestError('"cwd" must be a string')
        try:
            os.chdir(cwd)
        except OSError as e:
            raise _RequestError("cannot use cwd %r: %s; pass an existing directory" % (cwd, e.strerror or e))
        here = os.getcwd()
        if sys.path[:1] != [here]:
            try:
                sys.path.remove(here)
            except ValueError:
                pass
            sys.path.insert(0, here)


def _ends_quiet(src, node):
    """A ';' after the last expression silences it, as in IPython: comments
    after the ';' do not count (`x;  # note`), a ';' inside one does."""
    if ";" not in src:
        return False
    lines = src.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    # Only ';', blanks and comments can follow the cell's last statement.
    tail = lines[node.end_lineno - 1].encode("utf-8")[node.end_col_offset:].decode("utf-8", "replace")
    for line in [tail] + lines[node.end_lineno:]:
        if ";" in line.split("#", 1)[0]:
            return True
    return False


# __future__ imports last for the session, as in IPython (codeop keeps them).
_FUTURE_MASK = 0x1FE0000  # the CO_FUTURE_* bits, which are also their compiler flags
_future = 0


def _compile(src, name):
    """Compile a cell to (body code, last-expression code); SyntaxError as is."""
    global _future
    tree = compile(src, name, "exec", _AST_FLAGS | _future, True)
    expr = None
    if tree.body and type(tree.body[-1]) is _ast.Expr and not _ends_quiet(src, tree.body[-1]):
        expr = tree.body.pop()
    body = compile(tree, name, "exec", _RUN_FLAGS | _future, True) if tree.body else None
    last = compile(_ast.Expression(expr.value), name, "eval", _RUN_FLAGS | _future, True) if expr else None
    if body is not None:
        _future |= body.co_flags & _FUTURE_MASK
    return body, last


def _record_input(src):
    """IPython's input history: In[N], _i, _ii, _iii, _iN."""
    ns = _ns
    hist = ns.get("In")
    if type(hist) is not list:
        hist = ns["In"] = ns["_ih"] = [""]
    while len(hist) < _count:
        hist.append("")
    hist[_count:] = [src]
    # As IPython: _i is the previous input, _i00 this one.
    ns["_iii"], ns["_ii"], ns["_i"], ns["_i00"] = ns.get("_ii", ""), ns.get("_i", ""), ns.get("_i00", ""), src
    ns["_i%d" % _count] = src


def _record_output(v):
    """IPython's output history: _, __, ___, _N, Out[N]."""
    ns = _ns
    out = ns.get("Out")
    if type(out) is not dict:
        out = ns["Out"] = ns["_oh"] = {}
    out[_count] = v
    ns["___"], ns["__"], ns["_"] = ns.get("__", ""), ns.get("_", ""), v
    ns["_%d" % _count] = v


def _register_source(name, src):
    _sources[name] = src
    lc = sys.modules.get("linecache")
    if lc is not None:
        lc.cache[name] = (len(src), None, src.splitlines(True), name)


def _exec_code(body, last, ns, local=None):
    """Run compiled cell code; return the last expression's value (or None)."""
    if local is None:
        local = ns
    if body is not None:
        r = eval(body, ns, local)
        if body.co_flags & _CO_COROUTINE:
            _await(r)
    if last is not None:
        v = eval(last, ns, local)
        if last.co_flags & _CO_COROUTINE:
            v = _await(v)
        return v
    return None


def _run_source(src, name, ns=None, local=None):
    """Compile src (magics rewritten) under name and run it; return its last value.

    src must keep its line numbers relative to the text registered for name:
    cell magics pass their body with the magic line blanked.
    """
    if _maybe_magic(src):
        src = _ipy().transform(src)
    body, last = _compile(src, name)
    return _exec_code(body, last, _ns if ns is None else ns, local)


def _run(src):
    """Run one cell's source; send result or error; return the status."""
    if _ipython_mode:
        return _ipy().run_full(src)
    name = "<cell %d>" % _count
    _record_input(src)
    _register_source(name, src)
    for hook in _pre_cell:
        hook()
    code = src
    try:
        if _maybe_magic(src):
            code = _ipy().transform(src)
        body, last = _compile(code, name)
    except (SyntaxError, ValueError, OverflowError, MemoryError) as e:
        _send_error(e, only=True)
        return "error"
    v = _exec_code(body, last, _ns)
    if v is not None:
        _send_result(v)
    return "ok"


def _send_result(v):
    """Store v in the output history and send it as the cell's result."""
    _record_output(v)
    m = _method(v, "_ipython_display_")
    if m is not None:
        m()  # the object shows itself, as under IPython's display hook
        return
    bundle, meta = _format(v)
    _send_bundle("result", bundle, meta, _count)


def _send_bundle(kind, bundle, meta, count):
    if _capture is not None:
        _capture.append((kind, bundle, meta, None))
        return
    _flush_std()
    extra = ',"metadata":' + _json_value(meta) if meta else ""
    _send(
        '{"type":"%s","id":%s,"bundle":%s%s,"executionCount":%d}\n'
        % (kind, _qid, _bundle_json(bundle), extra, count)
    )


def _after_cell(status):
    for hook in _post_cell:
        try:
            hook(status)
        except Exception as e:
            _warn("post-cell hook %r raised %s: %s" % (hook, type(e).__name__, e), _qid)


def _cell(req):
    """Run one execute request: started, the cell, sync marks, done."""
    global _in_cell, _positioning, _interrupted, _count, _cur_id, _qid, _last_fd, _ack
    rid = req.get("id")
    if type(rid) is not str or not rid:
        _warn('execute request without a string "id" was ignored: send {"id":"…","code":"…"}')
        return
    _cur_id, _qid = rid, _q(rid)
    _ack = ('{"type":"interrupted","id":%s}\n' % _qid).encode()
    _interrupted = False
    status, cancelled = "error", False
    _in_cell = True  # before "started": an interrupt after it must land
    _positioning = True
    _last_fd = 0
    _gate.release()
    try:
        try:
            _send('{"type":"started","id":%s}\n' % _qid)
            code = req.get("code", "")
            if type(code) is not str:
                raise _RequestError('"code" must be a string')
            _apply(req)
            _count += 1
            try:
                status = _run(code)
            finally:
                _flush_figures()
                _after_cell(status)
            _in_cell = False
            cancelled = status == "error" and _ipython_mode and _interrupted  # IPython caught it
        except BaseException as e:
            _in_cell = False  # first: no KeyboardInterrupt may land in the handling
            status = "error"
            if isinstance(e, _RequestError):
                _send_plain_error("RequestError", str(e))
            elif isinstance(e, SystemExit) and e.code in (None, 0):
                status = "ok"
            else:
                cancelled = isinstance(e, KeyboardInterrupt) and _interrupted
                _send_error(e)
            del e
    except KeyboardInterrupt:  # landed between the cell's end and the flag
        _in_cell = False
    finally:
        _in_cell = False
    if _forked:  # a fork() in the cell returned into the runner: no marks, no done
        _flush_std()
        os._exit(0)  # before the gate: the flusher may have held it at the fork
    _gate.acquire()
    if _signal.getsignal(_SIGINT) is not _on_sigint:
        _signal.signal(_SIGINT, _on_sigint)  # the cell replaced it; idle must ignore
    _flush_std()
    _positioning = False
    mark = b"\x00\x1eEVH" + _nonce + b":" + rid.encode("utf-8", "surrogatepass") + b"\x1e\x00"
    _mark(1, mark)
    _mark(2, mark)
    _send(
        '{"type":"done","id":%s,"status":"%s","executionCount":%d,"cancelled":%s}\n'
        % (_qid, status, _count, "true" if cancelled else "false")
    )


def _mark(fd, mark):
    try:
        while mark:
            mark = mark[_os_write(fd, mark):]
    except OSError:
        pass  # the host closed that pipe; the done frame still tells it


def _serve():
    """Read requests until exit or EOF (the host is gone)."""
    reqs = io.open(_req_fd, "rb", buffering=1 << 16, closefd=False)
    while True:
        line = reqs.readline()
        if not line:
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
            return
        if kind != "execute":
            qid = _q(req["id"]) if type(req.get("id")) is str else None
            _warn('unknown request type %r ignored: use "execute" or "exit"' % (kind,), qid)
            continue
        _cell(req)


# --- start-up -------------------------------------------------------------


def _compiled(path):
    """The code of a helper file: the runner's own (the prelude) through the
    bootstrap's bytecode cache, as core.py itself is loaded, since compiling
    it cost about 2 ms of every start; any other file compiled afresh."""
    if _loader is not None and os.path.dirname(path) == _HERE:
        return _loader(_HERE, os.path.basename(path)[: -len(".py")])[1]
    with open(path, "rb") as f:
        return compile(f.read(), path, "exec", 0, True)


def _exec_file(path, what):
    """Exec a helper file into the user namespace; report failures as warnings."""
    saved = sys.stdout, sys.stderr
    buf = io.StringIO()
    sys.stdout = sys.stderr = buf
    had_file = "__file__" in _ns
    old_file = _ns.get("__file__")
    try:
        _ns["__file__"] = path
        exec(_compiled(path), _ns)
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
        if had_file:
            _ns["__file__"] = old_file
        else:
            _ns.pop("__file__", None)
    printed = buf.getvalue()
    if printed:
        _warn("%s %s printed at load: %s" % (what, path, printed[:4000]))


def _load_modules():
    """Exec *.py from EVALHOST_MODULES; a later dir overrides a same-named module."""
    chosen = {}
    for d in os.environ.get("EVALHOST_MODULES", "").split(os.pathsep):
        if not d:
            continue
        try:
            names = os.listdir(d)
        except FileNotFoundError:
            continue
        except OSError as e:
            _warn("extension module dir %s unreadable: %s" % (d, e))
            continue
        for n in names:
            if n.endswith(".py") and not n.startswith("."):
                chosen[n] = os.path.join(d, n)
    for n in sorted(chosen):
        _exec_file(chosen[n], "extension module")


def _python_version():
    v = sys.version_info
    s = "%d.%d.%d" % v[:3]
    if v.releaselevel != "final":
        s += v.releaselevel[0] + str(v.serial)
    return s


def _setup():
    global _frames_fd, _req_fd, _nonce, _ns, _out, _err
    try:
        os.set_inheritable(3, False)
    except OSError:
        sys.stderr.write(
            "evalhost runner: fd 3 (the frames pipe) is not open; "
            "runner.py is started by evalhost, not by hand\n"
        )
        sys.exit(2)
    _nonce = os.environ.pop("EVALHOST_SYNC_NONCE", "").encode()
    # The request pipe becomes private; user code sees /dev/null on fd 0.
    _req_fd = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)

    _out = _stream(1, "<stdout>", io.TextIOWrapper)
    _err = _stream(2, "<stderr>", _Stderr)
    _err.reconfigure(line_buffering=True)
    sys.stdout = sys.__stdout__ = _out
    sys.stderr = sys.__stderr__ = _err
    sys.stdin = sys.__stdin__ = _NoStdin()

    # The runner's own directory must not shadow user imports.
    here = os.getcwd()
    sys.path[:] = [p for p in sys.path if p and os.path.abspath(p) != _HERE]
    sys.path.insert(0, here)
    # As IPython: '' (the current directory, wherever os.chdir takes it)
    # before site-packages, so a cell can import from a directory it chdir'd to.
    i = next((i for i, p in enumerate(sys.path) if os.path.basename(p) in ("site-packages", "dist-packages")), 1)
    sys.path.insert(i, "")

    main = type(sys)("__main__")
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    _ns = main.__dict__

    builtins.display = display
    builtins.get_ipython = get_ipython
    _ns.update(In=[""], Out={}, _="", __="", ___="", _i="", _ii="", _iii="", _i00="")
    _ns["_ih"], _ns["_oh"] = _ns["In"], _ns["Out"]
    builtins.input = _deny_stdin
    builtins.StdinNotImplementedError = StdinNotImplementedError
    _patch_writers()
    _signal.signal(_SIGINT, _on_sigint)
    if _WAKE:
        _signal.signal(_WAKE, _on_wake)
    os.environ.setdefault("MPLBACKEND", "Agg")

    if os.environ.get("EVALHOST_IPYTHON") == "1":
        _start_ipython()
    else:
        sys.meta_path.insert(0, _IPythonHook)
    _StdlibHook.install()

    prelude = os.path.join(_HERE, "prelude.py")
    if os.path.exists(prelude):
        _exec_file(prelude, "prelude")
    _load_modules()
    _hidden.update(_ns)
    if _ipython_mode:
        _ipy().hide_startup_names(_hidden)

    _gate.acquire()
    _stop.acquire()
    _flusher_done.acquire()
    _thread.start_new_thread(_flusher, ())
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
        _ipy().start_full()
    except BaseException as e:
        _ipy().full_error = "%s: %s" % (type(e).__name__, e)


def _shutdown():
    _stop.release()
    if _gate.locked():
        _gate.release()
    _flusher_done.acquire(True, 1.0)
    _flush_std()


def main(boot_file=None):
    if boot_file:
        _RUNNER_FILES.add(boot_file)
    _setup()
    _send(
        '{"type":"ready","runner":%s,"python":%s,"pid":%d,"executable":%s,"marks":true,"wake":%d}\n'
        % (_q(RUNNER_VERSION), _q(_python_version()), os.getpid(), _q(sys.executable or ""), _WAKE)
    )
    try:
        _serve()
    finally:
        _shutdown()
    _exit_fast()


def _exit_fast():
    """Leave as Python's own exit does, minus the interpreter's teardown: that
    costs about a third of a one-shot `evalhost run -c pass` (issue 16). Non-daemon
    threads are joined and atexit handlers run, as at a normal exit; the cells'
    namespace is cleared and collected so its objects' finalizers run (an open
    file flushes), files left open elsewhere are flushed, and so are the std
    streams."""
    threading = sys.modules.get("threading")
    if threading is not None:
        try:
            threading._shutdown()
        except Exception:
            pass
    import atexit
    atexit._run_exitfuncs()
    _ns.clear()
    import gc
    gc.collect()
    # A file still open in a module's globals is flushed, as the teardown's
    # clearing of modules would have; start-up's objects are frozen out of
    # get_objects, so this walks only what the cells made.
    for obj in gc.get_objects():
        if isinstance(obj, io.IOBase):
            try:
                if not obj.closed:
                    obj.flush()
            except Exception:
                pass
    _flush_std()
    os._exit(0)


if __name__ == "__main__":
    main()  # also runnable directly: python core.py
