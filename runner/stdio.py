"""evalhost stdin: what a cell gets instead of a terminal. input(), sys.stdin
and getpass fail at once with StdinNotImplementedError (after an input
frame) instead of hanging; linecache, imported late, learns the cells'
sources; what showing a warning imports is found as the runner's own
imports are. Loaded by core at start-up; it imports nothing more.
"""

import io
import sys

_core = globals()["_core"]
_wire = _core._wire
_q = _core._q


class StdinNotImplementedError(NotImplementedError):
    """Raised when a cell asks for interactive input."""


StdinNotImplementedError.__module__ = "builtins"
_NO_STDIN = (
    "input() is not supported: evalhost cells have no interactive stdin; "
    "pass values in code or files instead"
)


def deny_stdin(prompt=""):
    _core._flush_std()
    _wire._send(_wire._frame("input", _wire._cur.qid, prompt=_q(str(prompt))))
    raise StdinNotImplementedError(_NO_STDIN)


deny_stdin.__name__ = deny_stdin.__qualname__ = "input"


class NoStdin(io.TextIOBase):
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
        deny_stdin()

    def readline(self, size=-1):
        deny_stdin()

    def readlines(self, hint=-1):
        deny_stdin()


def deny_getpass(prompt="Password: ", stream=None):
    """getpass.getpass: fails at once, as input() does. The real one opens
    /dev/tty, and a runner in a terminal's background process group stops
    there (SIGTTIN) until the cell times out."""
    _core._flush_std()
    _wire._send(_wire._frame("input", _wire._cur.qid, prompt=_q(str(prompt))))
    raise StdinNotImplementedError(
        "getpass() is not supported: evalhost cells have no interactive stdin; "
        "read secrets from a file or an environment variable instead"
    )


deny_getpass.__name__ = deny_getpass.__qualname__ = "getpass"


def _fix_linecache(lc):
    """Cells run before linecache was imported: give it their source, so
    inspect.getsource, pdb and traceback.print_exc show cell lines."""
    for name, src in list(_core._sources.items()):  # a copy: cells add to it meanwhile
        lc.cache.setdefault(name, _core._cache_entry(name, src))


def _fix_getpass(gp):
    gp.getpass = deny_getpass


def _as_is(module):
    """No adaptation: a module of StdlibHook.own only."""


class _FixingLoader:
    """Runs a stdlib module's own loader, then adapts the module to cells;
    with own, the module's code imports as the runner's own."""

    def __init__(self, loader, fix, own=False):
        self._loader, self._fix, self._own = loader, fix, own

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        if self._own:
            _core._imports().call(self._loader.exec_module, module)
        else:
            self._loader.exec_module(module)
        self._fix(module)

    def __getattr__(self, name):
        return getattr(self._loader, name)


class StdlibHook:
    """Meta-path hook for the few stdlib modules cells need adapted, imported
    lazily so start-up imports nothing; other imports pay one dict lookup.

    Those in own the interpreter imports itself to show a warning, in the
    thread that warned, where no import can be told from a cell's: warnings
    (3.13 for any warning, every version for a coroutine never awaited),
    linecache and tracemalloc (its formatting), tokenize (3.13's linecache,
    for a file on disk) and traceback (a coroutine's origin). Anyone's
    first import of one is found as the runner's own are (imports.py), and
    so are its code's, never in the cwd: a cell in /tmp that warned ran
    another user's /tmp/linecache.py. IPython has all but tracemalloc
    imported as it starts, so cells there get these too."""

    fixes = {"linecache": _fix_linecache, "getpass": _fix_getpass, "_posixsubprocess": _core._patch_fork_exec,
             "warnings": _as_is, "tokenize": _as_is, "traceback": _as_is, "tracemalloc": _as_is}
    own = frozenset(("warnings", "linecache", "tokenize", "traceback", "tracemalloc"))

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        fix = cls.fixes.get(name)
        if fix is None:
            return None
        import _frozen_importlib_external

        own = path is None and name in cls.own
        if own:
            path = _core._imports().start_dirs()
        spec = _frozen_importlib_external.PathFinder.find_spec(name, path, target)
        if spec is None and own:
            raise ModuleNotFoundError("No module named %r" % name, name=name)
        if spec is not None and spec.loader is not None:
            spec.loader = _FixingLoader(spec.loader, fix, own)
        return spec

    @classmethod
    def install(cls):
        for name, fix in cls.fixes.items():
            # Imported at start-up (site, .pth files), or built in: find_spec
            # never sees a built-in module, and loading one costs nothing.
            if name in sys.modules or name in sys.builtin_module_names:
                fix(sys.modules.get(name) or __import__(name))
        sys.meta_path.insert(0, cls)
