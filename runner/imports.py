"""evalhost's own imports: what the runner imports for itself (traceback at
an error, json, subprocess, ...) and what those modules import while the
runner uses them, found only where the interpreter found modules as it
started: its built-in and frozen modules, its start-up meta-path finders,
and the directories of sys.path at the runner's start minus '', the cwd and
the runner's own directory (the stdlib, site-packages). Never in a cell's
cwd, in '' or in a directory a cell added, where another user could have
put a traceback.py or a linecache.py: a cell that raised in /tmp ran
/tmp/traceback.py. A cell's own imports keep Python's semantics: the
finder decides only in a thread inside load() or call(), where a cell's
module of a start-up module's name (its html.py) is out of sys.modules.

Loaded by core (_imports) on the first such import not already done:
nothing at start-up.
"""

import _thread
import os
import sys

_core = globals()["_core"]
_external = sys.modules["_frozen_importlib_external"]
_FrozenImporter = sys.modules["_frozen_importlib"].FrozenImporter


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
        spec = self.search(name, target)
        if spec is not None:
            return spec
        if _probed() and not self._elsewhere(name, target):
            return None  # nowhere at all: a probe says so, as in python3
        raise ModuleNotFoundError("No module named %r" % name, name=name)

    def search(self, name, target=None):
        """name's spec where the runner's own imports look, or None."""
        finders, dirs = self.places or self._places()
        for f in finders:
            if f is _external.PathFinder:
                spec = _path_spec(name, dirs, target)
            elif f is _FrozenImporter and name in _core._module("stdio").StdlibHook.fixes:
                continue  # _path_spec's: the hook finds frozen ones (3.15's linecache) first
            else:
                find = getattr(f, "find_spec", None)  # an editable install's, setuptools' distutils hack
                spec = find(name, None, target) if find is not None else None
            if spec is not None:
                return spec
        return None

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
        skip = {os.path.realpath(cwd)} | {os.path.realpath(d) for d in _core._OWN_DIRS}
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
    imports them, frozen ones too."""
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
    entered = False
    try:
        local.on = True  # in the try: an interrupt before it cannot leave the flag on
        if not prev:
            entered = _enter(not getattr(local, "unlending", False))
        return fn(*args)
    finally:
        if entered:
            _leave()
        local.on = prev


# --- a cell's module of a start-up module's name ---------------------------
#
# The finder decides only what is not imported yet: a cell that imported
# its html.py (from the cwd) left it in sys.modules, where IPython 9's first
# traceback, importing stack_data (`from html import escape`), found it and
# failed. So while the flag is on, such a module (a top-level one imported
# from outside the start-up places, whose name those places have too) and
# its submodules are out of sys.modules, the runner's own of that name in
# (imported then, and kept for the next time); the cell's go back after.

_verdicts = {}  # name -> (module, whether it is a cell's of a start-up name)
_own_mods = {}  # name -> the runner's own module of a name a cell's module has
_scanned = None  # (len(sys.modules), its last name) when _shadowing was made
_shadowing = ()  # the top-level names of the cells' modules _shadows found
# Threads inside call() at once share one lending: the first in lends, the
# last out gives back. A second that lent again took the runner's modules,
# already in, for the cell's, and gave them back last.
_lock = _thread.allocate_lock()
_inside = 0  # threads inside call()
_lent = None  # what the first of them lent (_lend's)
# 3.15's lazy imports (`lazy import _colorize` in its traceback, tokenize,
# difflib...) are made where the name is first used, in whatever thread,
# outside call(): the runner's diff() ran the cwd's _colorize.py. While
# threads are inside call(), a filter makes theirs eager; a cell's are left
# to the filter it set (theirs), which is back when the last thread leaves.
_set_lazy_filter = getattr(sys, "set_lazy_imports_filter", None)
_theirs = None


class Lending(Exception):
    """An unlending thread's import would take a cell's modules out of
    sys.modules (or keep them out longer)."""


def never_lend():
    """This thread's own imports never take a cell's modules out of
    sys.modules: one that would raises Lending instead. For the warm-up's
    thread, which runs beside cells: a cell running while it lent would
    not find its own modules (importlib.reload(random): "module random not
    in sys.modules"), and an import of one there would load it anew. A
    thread that runs no cell code meanwhile (the main thread formatting a
    cell's error) lends as before."""
    _finder.local.unlending = True


def _enter(lend=True):
    """Count this thread in, lending the cells' modules if it is the first;
    True once counted (then _leave must follow). Lending when not lend
    (or joining a lending) raises Lending, counting nothing."""
    global _inside, _lent
    with _lock:
        if _inside == 0:
            if not lend and _shadowing_names():
                raise Lending("a cell's module has a start-up module's name")
            _lent = _lend()
            if _set_lazy_filter is not None:
                _lazy_filter_on()
        elif not lend and _lent:
            raise Lending("a cell's modules are lent")
        _inside += 1
    return True


def _leave():
    global _inside, _lent
    with _lock:
        _inside -= 1
        if _inside == 0 and _set_lazy_filter is not None:
            _lazy_filter_off()
        if _inside == 0 and _lent:
            users, _lent = _lent, None
            _give_back(users)


def _eager_inside(*args):
    """The lazy imports filter while threads are inside call(): False (do
    it now) for theirs, a cell's as the cell's filter says."""
    if getattr(_finder.local, "on", False):
        return False
    theirs = _theirs
    return True if theirs is None else theirs(*args)


def _lazy_filter_on():
    global _theirs
    current = sys.get_lazy_imports_filter()
    if current is not _eager_inside:
        _theirs = current
        _set_lazy_filter(_eager_inside)


def _lazy_filter_off():
    global _theirs
    if sys.get_lazy_imports_filter() is _eager_inside:  # else a cell set its own meanwhile
        _set_lazy_filter(_theirs)
    _theirs = None


def _lend():
    """Take the cells' modules of start-up names out of sys.modules, the
    runner's own of those names in; returns {name: the cell's module}."""
    if not _shadowing_names():
        return None
    modules = sys.modules
    users = {}
    for name in _family(_shadowing):
        users[name] = modules[name]
        own = _own_mods.get(name)
        if own is not None:
            modules[name] = own
        else:
            del modules[name]
    return users


def _shadowing_names():
    """The top-level names of the cells' modules of start-up names in
    sys.modules (_shadowing, looked for again only when it changed)."""
    global _scanned, _shadowing
    modules = sys.modules
    # A new module goes last (sys.modules is a dict): what has not changed
    # needs no look (~50 us for 250 modules in full mode).
    mark = len(modules), next(reversed(modules), None)
    if mark != _scanned:
        found, verdicts = [], {}
        for name, mod in list(modules.items()):
            if "." in name:
                continue
            v = _verdicts.get(name)
            if v is None or v[0] is not mod:
                v = (mod, _shadows(name, mod))
            verdicts[name] = v
            if v[1]:
                found.append(name)
        # Only what sys.modules holds: a module a cell took out of it is not kept alive here.
        _verdicts.clear()
        _verdicts.update(verdicts)
        _scanned, _shadowing = mark, tuple(found)
    return _shadowing


def _family(tops):
    """The names in sys.modules of the modules tops name and of their
    submodules (a package's only: a scan of sys.modules)."""
    modules = sys.modules
    names = [n for n in tops if n in modules]
    packages = tuple(n + "." for n in names if hasattr(modules[n], "__path__"))
    if packages:
        names += [n for n in list(modules) if n.startswith(packages)]
    return names


def _give_back(users):
    """Put the cells' modules back, keeping the runner's own imported meanwhile."""
    global _scanned
    modules = sys.modules
    for name in _family({n.partition(".")[0] for n in users}):
        mod = modules[name]
        if mod is not users.get(name):
            _own_mods[name] = mod
            if name not in users:
                del modules[name]
    modules.update(users)
    if _scanned is not None:
        # What came meanwhile is the runner's own (found where it looks),
        # the cell's modules put back last: no need to look again.
        _scanned = len(modules), next(reversed(modules), None)


def _shadows(name, mod):
    """Whether mod, sys.modules[name], was imported from outside the
    start-up places (the cwd, a directory a cell added) and those places
    have a module of that name: a cell's module the runner's own imports
    must not get."""
    path = getattr(mod, "__file__", None)
    if type(path) is not str or not os.path.isabs(path):
        return False
    if getattr(getattr(mod, "__spec__", None), "origin", None) in ("frozen", "built-in"):
        return False  # 3.11's frozen modules have a __file__ too
    for d in start_dirs():
        for place in (d, os.path.realpath(d)):
            if path.startswith(place.rstrip(os.sep) + os.sep):
                return False
    try:
        spec = _finder.search(name)
    except Exception:
        return False
    # Another file (an editable install's finder finds the module itself).
    return spec is not None and spec.origin != path


def load(name):
    """The module name (dotted or not), imported as the runner's own."""
    call(__import__, name)
    return sys.modules[name]
