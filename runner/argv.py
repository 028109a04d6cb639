"""evalhost argv: the command line a script's cells see, as python3 sets
it for FILE, -c, - or -m: sys.argv, __main__'s __file__, and sys.path[0]
(the script's directory, links resolved, '' for -c and -, the cwd's full
path for -m). One rule for
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
    """What the last apply set: the __file__, and the sys.path entry; and
    what a module's run set (ran_module)."""

    def __init__(self):
        self.file = None
        self.dir = None
        self.module = None  # {name: (value before the run, value it set)}


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
    """sys.argv and ns's __file__ as python3 sets them: a __file__ an
    earlier apply set goes when this one has none; one the cells set
    themselves stays. So do the module's names an earlier module's run
    set (ran_module)."""
    sys.argv = list(argv)
    if state.module is not None:
        for k, (old, new) in state.module.items():
            if ns.get(k, _MISSING) is new:
                if old is _MISSING:
                    ns.pop(k, None)
                else:
                    ns[k] = old
        state.module = None
    if file is not None:
        ns["__file__"] = state.file = file
    elif state.file is not None:
        if ns.get("__file__") is state.file:
            del ns["__file__"]
        state.file = None
    _path0(state, argv, file)


def safe_path():
    """python3 -I (isolated) or -P (3.11+, PYTHONSAFEPATH too): no path
    that may be unsafe goes first on sys.path, not the script's directory,
    '' or the cwd."""
    return bool(sys.flags.isolated or getattr(sys.flags, "safe_path", False))


def _path0(state, argv, file):
    """python3 FILE puts FILE's directory, links resolved, first on
    sys.path, so the script's sibling modules import; python3 -c and -
    put '' (the cwd, wherever a chdir takes it); python3 -m the cwd's full
    path (argv[0] is '-m' until runpy has found the module); none of them
    under -I or -P (safe_path). The entry an earlier apply put there goes;
    one that was first already (the cwd) is left."""
    if state.dir is not None:
        try:
            sys.path.remove(state.dir)
        except ValueError:
            pass
        state.dir = None
    if safe_path():
        return
    if file is not None and os.path.isabs(file):
        first = os.path.dirname(os.path.realpath(file))
    elif argv[0] in ("-c", "-"):
        first = ""
    elif argv[0] == "-m":
        first = os.getcwd()
    else:
        return
    if sys.path[:1] != [first]:
        sys.path.insert(0, first)
        state.dir = first


def cwd_entered(state, here):
    """The cwd, here, was put first on sys.path: an entry of ours equal to
    it is the cwd's now, which the next apply leaves."""
    if state.dir == here:
        state.dir = None
