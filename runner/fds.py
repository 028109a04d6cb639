"""evalhost fds: the runner's own descriptors, out of the cells' way.

The host gives the runner its frames pipe on fd 3, its requests on fd 0
and the cells' stdout and stderr pipes on fd 1 and 2 (frames doc). A
script that closes what it did not open (a daemonizer's os.closerange(3,
MAXFD), a loop of os.close over /proc/self/fd, os.dup2 over fd 3) took
the runner's pipes with it, where python3 goes on printing; one that
points fd 1 elsewhere (os.dup2 of a log file) got the runner's marks in
its file. So, once ready is sent, the frames and requests pipes move to
free descriptors high up (below the soft RLIMIT_NOFILE, at most 1024: a
larger fd table costs every fork), leaving the low numbers to the cells as
python3 has them (a script's first os.open is 3), and the marks go to
copies of the stdout and stderr pipes there (wire._pipes), whatever fd 1
and 2 have become. os.close, os.closerange and os.dup2 spare these: os.close
of one, or os.dup2 from one, fails with EBADF, as python3's of a
descriptor it never opened; os.closerange closes around them; os.dup2
onto one moves it again first, so the script gets the descriptor it asked
for. A fork() child of a cell, which never speaks for the runner, closes
them at once and is guarded no more, so a daemon does not hold the host's
pipes open. The requests pipe is read at the number held here
(Requests), so a move is seen by the next read.

Only Python's os functions are guarded: C code calling close(2) or
dup2(2) itself, and a file object made on one of them (open(fd),
os.fdopen, socket(fileno=fd)) and closed, still reach them; /proc/self/fd
lists them. Loaded by core right after ready, with cells.
"""

import io
import os

_core = globals()["_core"]
_wire = _core._wire

_close, _closerange, _dup2 = os.close, os.closerange, os.dup2
_EBADF, _EMFILE = 9, 24  # errno's, on Linux and macOS alike
_TOP = 1024  # the runner's descriptors go just below this, or the soft limit

own = frozenset()  # the runner's descriptors
_requests = -1  # the requests pipe's descriptor (Requests reads it)
_top = _TOP  # they go below this (take)


def take():
    """Move fd 3 (frames) and core's copy of the requests pipe high up, copy
    the stdout and stderr pipes there for the marks (close-on-exec, all),
    and guard them; once, before the first request."""
    global _requests, _top
    try:
        limit = os.sysconf("SC_OPEN_MAX")
    except (OSError, ValueError):
        limit = _TOP
    _top = min(limit, _TOP) if limit > 0 else _TOP
    _wire._frames_fd = _move(_wire._frames_fd)
    _requests = _core._req_fd = _move(_core._req_fd)
    pipes = list(_wire._pipes)
    for fd in _wire._fds:  # fd 1, and fd 2 unless it is fd 1's pipe
        pipes[fd] = _move(fd, keep=True)
    _wire._pipes = pipes
    _guard()
    os.register_at_fork(after_in_child=_after_fork_child)
    os.close, os.closerange, os.dup2 = close, closerange, dup2


def _guard():
    global own
    fds = [_wire._frames_fd, _requests] + [fd for i, fd in enumerate(_wire._pipes) if fd != i]
    own = frozenset(fd for fd in fds if fd > 2)


def _free():
    """The highest descriptor below _top that is not open, or None."""
    for fd in range(_top - 1, 2, -1):
        if fd in own:
            continue
        try:
            os.get_inheritable(fd)
        except OSError:
            return fd
    return None


def _move(fd, keep=False):
    """fd moved (with keep, copied) to the highest free descriptor below
    _top; it stays where it is when there is none above it."""
    to = _free()
    if to is None or to <= fd:
        return fd
    try:
        _dup2(fd, to, False)
    except OSError:
        return fd
    if not keep:
        _close(fd)
    return to


def _ebadf():
    return OSError(_EBADF, os.strerror(_EBADF))


def _index(fd):
    """fd as the os functions read it, or None where they refuse it."""
    if type(fd) is int:
        return fd
    try:
        return type(fd).__index__(fd)
    except Exception:
        return None


def close(fd):
    if own and _index(fd) in own:
        raise _ebadf()  # as python3's os.close of a descriptor it never opened
    return _close(fd)


def closerange(fd_low, fd_high, /):
    lo, hi = _index(fd_low), _index(fd_high)
    if not own or lo is None or hi is None:
        return _closerange(fd_low, fd_high)
    for fd in sorted(own):
        if lo <= fd < hi:
            _closerange(lo, fd)
            lo = fd + 1
    return _closerange(lo, hi)


def dup2(fd, fd2, inheritable=True):
    if own:
        if _index(fd) in own:
            raise _ebadf()
        if _index(fd2) in own:
            return _dup2_over(fd, _index(fd2), inheritable)
    return _dup2(fd, fd2, inheritable)


for _f, _real in ((close, _close), (closerange, _closerange), (dup2, _dup2)):
    _f.__doc__, _f.__module__ = _real.__doc__, _real.__module__


def _dup2_over(fd, fd2, inheritable):
    """os.dup2 onto a runner descriptor: the runner's moves to another free
    one first; the script gets fd2 as python3 would (or dup2's error)."""
    global _requests
    with _wire._send_lock:  # nothing of the runner's goes to fd2 once it is the script's
        to = _free()
        if to is None:
            raise OSError(_EMFILE, os.strerror(_EMFILE))
        _dup2(fd2, to, False)
        if fd2 == _wire._frames_fd:
            _wire._frames_fd = to
        elif fd2 == _requests:
            _requests = _core._req_fd = to
        else:
            _wire._pipes = [to if p == fd2 else p for p in _wire._pipes]
        _guard()
    try:
        return _dup2(fd, fd2, inheritable)
    except BaseException:
        _close(fd2)  # the runner's old copy: python3 has nothing there
        raise


def _after_fork_child():
    """A fork() child of a cell never speaks for the runner: its copies of
    the pipes go, and its closes are its own."""
    global own
    for fd in own:
        try:
            _close(fd)
        except OSError:
            pass
    own = frozenset()


class Requests(io.RawIOBase):
    """The requests pipe, read at the number held now (a move changes it)."""

    def readable(self):
        return True

    def readinto(self, b):
        return os.readv(_requests, (b,))
