"""evalhost's own imports: what the runner imports for itself (traceback at
an error, json, subprocess, ...) and what those modules import while the
runner uses them, found only where the interpreter found modules as it
started: its built-in and frozen modules, its start-up meta-path finders,
and the directories of sys.path at the runner's start minus '', the cwd and
the runner's own directory (the stdlib, site-packages). Never in a cell's
cwd, in '' or in a directory a cell added, where another user could have
put a traceback.py or a linecache.py: a cell that raised in /tmp ran
/tmp/traceback.py. A cell's own imports keep Python's semantics: the
finder decides only in a thread inside load() or call().

Loaded by core (_imports) on the first such import not already done:
nothing at start-up.
"""

import _thread
import os
import sys

_core = globals()["_core"]
_external = sys.modules["_frozen_importlib_external"]


class _Finder:
    """First on sys.meta_path. While this thread's flag is on, a top-level
    name is found as the interpreter's start-up finders find it, with the
    path finder searching the start-up directories only, and a name found
    nowhere there is a ModuleNotFoundError rather than a search of sys.path,
    but for a probe (importlib.util.find_spec) of a name nothing finds.
    A submodule is left to its package's __path__, and a thread whose flag
    is off (a cell's) pays one attribute read per import."""

    def __init__(self):
        self.local = _thread._local()
        self.places = None  # (finders, dirs): made on the first flagged import

    def find_spec(self, name, path=None, target=None):
        if path is not None or not getattr(self.local, "on", False):
            return None
        finders, dirs = self.places or self._places()
        for f in finders:
            if f is _external.PathFinder:
                spec = _path_spec(name, dirs, target)
            else:
                find = getattr(f, "find_spec", None)  # an editable install's, setuptools' distutils hack
                spec = find(name, None, target) if find is not None else None
            if spec is not None:
                return spec
        if _probed() and not self._elsewhere(name, target):
            return None  # nowhere at all: a probe says so, as in python3
        raise ModuleNotFoundError("No module named %r" % name, name=name)

    def _elsewhere(self, name, target):
        """Whether a finder after this one (the cwd, a cell's sys.path or
        finder) would find name: a probe of it is refused as an import is,
        lest its caller load the spec it got."""
        for f in sys.meta_path:
            find = getattr(f, "find_spec", None)
            if f is not self and find is not None and find(name, None, target) is not None:
                return True
        return False

    def _places(self):
        path, cwd, finders = _core._start
        # A relative entry ('' among them) names whatever the cwd is now.
        skip = {os.path.realpath(cwd), os.path.realpath(_core._HERE)}
        dirs = []
        for p in path:
            if isinstance(p, str) and os.path.isabs(p) and p not in dirs and os.path.realpath(p) not in skip:
                dirs.append(p)
        self.places = finders, dirs
        return self.places


def _probed():
    """Whether the find_spec asking is a probe (importlib.util.find_spec,
    IPython 9's of argcomplete), which says None for a module that is
    nowhere, not an import, which is refused here at once."""
    try:
        return sys._getframe(3).f_code.co_name != "_find_and_load_unlocked"
    except ValueError:
        return True


def _path_spec(name, dirs, target):
    """The path finder's spec of name in dirs; the modules stdio's hook
    knows (linecache, getpass, _posixsubprocess, what showing a warning
    imports) through it, which adapts them to cells as it does when a cell
    imports them."""
    hook = _core._module("stdio").StdlibHook
    if name in hook.fixes:
        return hook.find_spec(name, dirs, target)
    return _external.PathFinder.find_spec(name, dirs, target)


_finder = _Finder()


def start_dirs():
    """The directories the runner's own imports search: sys.path at its
    start minus '', the cwd and the runner's directory."""
    return (_finder.places or _finder._places())[1]


def call(fn, *args):
    """fn(*args) with this thread's imports found as the runner's own."""
    meta = sys.meta_path
    if not any(f is _finder for f in meta):  # first use, or a cell replaced sys.meta_path
        meta.insert(0, _finder)
    local = _finder.local
    prev = getattr(local, "on", False)
    try:
        local.on = True  # in the try: an interrupt before it cannot leave the flag on
        return fn(*args)
    finally:
        local.on = prev


def load(name):
    """The module name (dotted or not), imported as the runner's own."""
    call(__import__, name)
    return sys.modules[name]
