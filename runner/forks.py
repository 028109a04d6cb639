"""A cell's fork warns of threads as python3's would, not of the runner's.

3.12+ warns at os.fork() and os.forkpty() in a process of more than one
OS thread ("DeprecationWarning: This process (pid=N) is multi-threaded,
use of fork() may lead to deadlocks in the child."), shown when the
caller is __main__: a cell, a script's code. The runner's flusher thread is
always there, so every such fork warned where python3 running the same
script is silent (and raised under -W error). A filter ignores that
warning when the runner's own threads are the only ones beside the main
thread as it is matched: the process's OS threads counted as CPython
counts them (Linux: /proc/self/stat; elsewhere the threads Python
started), less the runner's live ones (core's _own_threads; none in a
forked child). A thread of the user's, or of a C library's (a BLAS pool),
leaves it shown, as python3 shows it.

Before each fork (core's at-fork hook, 3.12+) the filter is put first in
the list the warning is matched against (warnings.filters, or _warnings'
own before warnings is imported), where a cell's filterwarnings or
catch_warnings may have put others ahead of it or replaced the list. It
takes itself out as it matches (3.13 warns after the at-fork hooks have
run, so no hook can); where a thread of the user's lets the warning
through, it stays until the next fork, matching nothing else. Where
_warnings lacks what this needs, nothing is changed.
"""

import _thread
import _warnings
import sys


class _ForkMessage:
    """Matches the fork warning's message, as a filter's regex would, while
    the runner's threads are the only ones besides the main thread."""

    @staticmethod
    def match(text):
        if not (text.startswith("This process (pid=") and "is multi-threaded, use of fork" in text
                and _threads() - _core._own_threads[0] <= 1):
            return False
        # Its work done, it leaves the list a cell sees as python3's; the
        # matching loop ends on a match, so it misses no filter for this.
        filters = _filters()
        for i, e in enumerate(filters or ()):
            if e is _entry:
                del filters[i]
                _mutated()()
                break
        return True


_entry = ("ignore", _ForkMessage(), DeprecationWarning, None, 0)


def _threads():
    """The process's threads as CPython's fork warning counts them."""
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read()
        return int(stat[stat.rindex(b")") + 2 :].split()[17])
    except (OSError, ValueError, IndexError):
        return _thread._count() + 1


def _filters():
    """The list a warning is matched against now, or None."""
    w = sys.modules.get("warnings")
    filters = getattr(w, "filters", None) if w is not None else getattr(_warnings, "filters", None)
    return filters if type(filters) is list else None


def _mutated():
    """_warnings' way to say its filters changed, or None: 3.14 has only
    _filters_mutated_lock_held, to be called under its (recursive) lock."""
    mutated = getattr(_warnings, "_filters_mutated", None)
    if mutated is not None:
        return mutated
    held = getattr(_warnings, "_filters_mutated_lock_held", None)
    acquire, release = getattr(_warnings, "_acquire_lock", None), getattr(_warnings, "_release_lock", None)
    if held is None or acquire is None or release is None:
        return None

    def locked():
        acquire()
        try:
            held()
        finally:
            release()

    return locked


def before():
    """Before a fork: the filter first in the list the warning will meet."""
    mutated = _mutated()
    filters = _filters()
    if mutated is None or filters is None or filters and filters[0] is _entry:
        return
    for i, e in enumerate(filters):
        if e is _entry:
            del filters[i]
            break
    filters.insert(0, _entry)
    mutated()
