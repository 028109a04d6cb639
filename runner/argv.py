"""evalhost argv: the command line a script's cells see, as python3 sets
it for FILE, -c, - or -m: sys.argv, __main__'s __file__ (3.8's a
relative FILE as given, 3.9+'s absolute), __loader__ and
__cached__ (a FILE's SourceFileLoader, -c's and -'s BuiltinImporter;
runpy's for -m; 3.15 sets no __cached__), and sys.path
(the script's directory, links resolved, first for FILE, '' for -c and -,
the cwd's full path for -m; and none of the notebook's entries, the cwd
and '', that the runner or IPython put there). One rule for
both backends: the runner loads this module (cells.py), and the gateway
sends its source into a kernel (runner.ArgvSource, gateway/snippets.go),
so it stands alone: stdlib only, no _core. What an apply set is kept in
the State it is given, for the next apply to take back.
Loaded by cells as it loads.
"""

import os
import sys


# What runpy._run_module_as_main sets in __main__'s namespace besides
# __name__ and __doc__: the module's, not the next command's.
MODULE_NAMES = ("__file__", "__cached__", "__loader__", "__package__", "__spec__")
_MISSING = object()


class State:
    """What the last apply set: the __file__, the sys.path entry, and the
    notebook's entries it took off sys.path; what a module's run set
    (ran_module); and cwd, the notebook's cwd entry (enter_cwd)."""

    def __init__(self, cwd=None):
        self.file = None
        self.named = None  # (the request's file, the name python3 gives it: named)
        self.dir = None
        self.module = None  # {name: (value before the run, value it set)}
        self.main = None  # {name: (value before, value set)}: the last apply's __loader__, __cached__
        self.cwd = cwd  # the very str object on sys.path: found by identity
        self.applied = False  # an apply's sys.path holds: the notebook's entries are off
        self.taken = []  # [(index, entry)]: the notebook's entries the last apply took off


def before_module(ns):
    """What ran_module is given: ns's MODULE_NAMES before a module runs."""
    return {k: ns.get(k, _MISSING) for k in MODULE_NAMES}


def ran_module(state, ns, before):
    """A module ran as python3 -m runs it (runpy), in ns: the next apply
    takes back what it set, so a later -c or FILE does not run as the
    module (multiprocessing's spawn re-imports __main__ by its __spec__,
    a relative import resolves against its __package__)."""
    state.module = {k: (v, ns.get(k, _MISSING)) for k, v in before.items()}


def apply(state, ns, argv, file):
    """sys.argv, ns's __file__, __loader__ and __cached__ and sys.path as
    python3 sets them: a __file__ an earlier apply set goes when this one
    has none; one the cells set themselves stays. So do the module's names
    an earlier module's run set (ran_module)."""
    sys.argv = list(argv)
    _take_back(ns, state.module)  # first: the module's run came after the apply below
    state.module = None
    _take_back(ns, state.main)
    shown = _as_given(argv, file)
    state.named = (file, shown) if shown != file else None
    state.main = _main_names(ns, argv, shown)
    if file is not None:
        ns["__file__"] = state.file = shown
    elif state.file is not None:
        if ns.get("__file__") is state.file:
            del ns["__file__"]
        state.file = None
    _sys_path(state, argv, file)


def _as_given(argv, file):
    """The name python3 gives FILE, file (absolute: the cwd joined to a
    relative FILE, not cleaned): 3.8's python3 keeps FILE as given on its
    command line, argv[0], for __file__, its loader, its code (tracebacks,
    warnings, SyntaxErrors) and sys.path's directory entry; 3.9+'s makes it
    absolute. Only where file is argv[0] joined to this cwd: a FILE read
    from elsewhere (--cwd) keeps its absolute path, which still reads."""
    if sys.version_info >= (3, 9) or file is None:
        return file
    first = argv[0]
    if not first or first in ("-c", "-", "-m") or os.path.isabs(first):
        return file
    try:
        cwd = os.getcwd()
    except OSError:
        return file
    return first if file == os.path.join(cwd, first) else file


def named(state, filename):
    """A cell's filename as python3 names it: FILE as given on 3.8
    (_as_given), when filename is the request's file."""
    if state.named is not None and filename == state.named[0]:
        return state.named[1]
    return filename


def _take_back(ns, names):
    """Put back what names ({name: (old, new)}) says was set, where it
    still holds what was set."""
    for k, (old, new) in (names or {}).items():
        if ns.get(k, _MISSING) is new:
            if old is _MISSING:
                ns.pop(k, None)
            else:
                ns[k] = old


def _main_names(ns, argv, file):
    """__main__'s __loader__ and __cached__ as python3 sets them for the
    command line (Python/pythonrun.c): a FILE's source loader and a
    __cached__ of None; -c's BuiltinImporter without __cached__, stdin's
    with one of None (3.15's, neither with one). -m's are runpy's.
    Returns what it set, for the next apply to take back."""
    bootstrap = sys.modules.get("_frozen_importlib")
    first = argv[0]
    if first == "-m" or bootstrap is None:
        return None
    cached = sys.version_info < (3, 15)
    if first in ("-c", "-"):
        names = {"__loader__": bootstrap.BuiltinImporter}
        if first == "-" and cached:
            names["__cached__"] = None
    elif file is not None:
        external = sys.modules.get("_frozen_importlib_external")
        if external is None:
            return None
        names = {"__loader__": external.SourceFileLoader("__main__", file)}
        if cached:
            names["__cached__"] = None
    else:
        return None
    done = {k: (ns.get(k, _MISSING), v) for k, v in names.items()}
    ns.update(names)
    return done


def safe_path():
    """python3 -I (isolated) or -P (3.11+, PYTHONSAFEPATH too): no path
    that may be unsafe goes first on sys.path, not the script's directory,
    '' or the cwd."""
    return bool(sys.flags.isolated or getattr(sys.flags, "safe_path", False))


def _sys_path(state, argv, file):
    """sys.path as python3 has it for the command line. python3 FILE puts
    FILE's directory, links resolved, first, so the script's sibling
    modules import, and neither the cwd nor ''; python3 -c and - put ''
    (the cwd, wherever a chdir takes it) first; python3 -m the cwd's full
    path (argv[0] is '-m' until runpy has found the module); none of them
    under -I or -P (safe_path). So the notebook's entries go, the cwd the
    runner or a request put first and every '' (the runner's and IPython's
    before site-packages): left there, a json.py in the cwd would shadow
    the stdlib's for a script run from that directory. The entries the
    user's PYTHONPATH or a .pth put there stay. What an earlier apply put
    and took is given back first, so each command line starts from the
    notebook's sys.path, as the cells left it."""
    _give_back(state)
    if safe_path():
        return
    if file is not None and os.path.isabs(file):
        first = os.path.dirname(os.path.realpath(file))
    elif argv[0] in ("-c", "-"):
        first = ""
    elif argv[0] == "-m":
        first = os.getcwd()
    else:
        first = None  # a script with no file to place: nothing first
    state.applied = True
    taken = [(i, p) for i, p in enumerate(sys.path) if p == "" or (p is state.cwd and p is not None)]
    for i, _ in reversed(taken):
        del sys.path[i]
    state.taken = taken
    if first is not None:
        sys.path.insert(0, first)
        state.dir = first


def _give_back(state):
    """Take off the entry the last apply put first, and put back the
    notebook's entries it took, where they were."""
    if state.dir is not None:
        _remove(state.dir)
        state.dir = None
    for i, p in state.taken:
        sys.path.insert(min(i, len(sys.path)), p)
    state.taken = []


def _remove(entry):
    """Take entry off sys.path: that very object, which a PYTHONPATH entry
    of the same directory is not; '' (one object in CPython) the first."""
    for i, p in enumerate(sys.path):
        if p is entry or (entry == "" and p == ""):
            del sys.path[i]
            return


def main_path(state):
    """python3 DIR, python3 APP.pyz: a script that is a directory or a zip
    application runs its __main__ module with the path itself first on
    sys.path (not its directory), -I or not, as python3 puts it there; the
    path, or None for a script that is a file."""
    path = state.file
    if path is None:
        return None
    if not os.path.isdir(path):
        # Loaded at every start (sys.path_hooks has its zipimporter), so
        # taken from sys.modules: an import would look in the cwd first.
        zipimport = sys.modules.get("zipimport")
        try:
            zipimport.zipimporter(path)
        except Exception:
            return None
    if state.dir is not None:
        _remove(state.dir)
    sys.path.insert(0, path)
    state.dir = path
    return path


def enter_cwd(state, here):
    """A request's cwd, here, is the notebook's cwd entry now, first on
    sys.path in place of the last one (the runner's start put the first;
    the gateway's kernel gets one with its first cwd). While an apply's
    sys.path holds, here only replaces the taken entry, for the next apply
    to give back: a script's run keeps python3's sys.path through its
    cells. Nothing under -I or -P."""
    if safe_path():
        return
    old, state.cwd = state.cwd, here
    if state.applied:
        state.taken = [(i, p) for i, p in state.taken if p is not old or old is None]
        state.taken.insert(0, (0, here))
        return
    if old is not None:
        _remove(old)
    sys.path.insert(0, here)
