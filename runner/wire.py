"""evalhost wire: every byte the runner writes to fd 3, and the marks on fd 1/2.

Frame lines (built by _frame, written whole by _send under the send lock),
the held line that rides with the next frame (a started, a result before
its done), position marks before positioned frames, sync marks and the
done frame at a cell's end, stream syncs when text switches pipes, and the
interrupted acknowledgement (frames doc, "Order" and "interrupted"). The
request under way is _cur here: cells.Cell sets it, the signal handler and
the flusher read it. Loaded by core as it loads, before start-up: its
state is read on every flush and frame, so it is this module's globals,
never another module's attributes.

And the descriptors those bytes go to (take_fds, at the end; the contract
is runner/doc.go's): moved below 64 as the runner starts, out of the way
of a cell's os.close, closerange, dup2 and fdopen, which spare them.
"""

import _json
import _signal
import _thread
import io
import os
import sys

_core = globals()["_core"]

MAX_LINE = 32 << 20  # frames.DefaultMaxLine
_SIGINT = _signal.SIGINT
_q = _json.encode_basestring_ascii
_os_write = os.write  # the real one: stdio patches os.write at start-up

_frames_fd = 3
# Set at start-up: _nonce by core, _streams by stdio; _forked by stdio in a fork() child.
_nonce = b""
_streams = ()  # the runner's own sys.stdout and sys.stderr
_forked = False  # a fork() child of a cell sends nothing
_send_lock = _thread.allocate_lock()

# Marks (frames doc, "Order"), by fd: whether the runner's writers put bytes
# on it since its last mark, and the position whose mark it owes before its
# next bytes (a positioned frame went out while it was clean).
_dirty = [False, True, True]
_owed = [0, 0, 0]
_fds = (1, 2)  # the fds that take marks: fd 1 alone when fd 2 is its pipe (merge)
_fd_bits = 3  # _fds as bits (fd 1 is 1, fd 2 is 2)
# By fd: the descriptor holding the host's pipe of fd 1 and 2, where marks
# go: the runner's own copies (take_fds), whatever a cell made fd 1 and 2.
_pipes = [0, 1, 2]
_held = b""  # a frame line that goes out with the next one (a result, with its done)
_ioctl = None  # (fcntl.ioctl, FIONREAD) once loaded; False where there is none
_ioctl_wanted = False  # _clean was asked once without it


class _Request:
    """What the signal handler, the flusher and the frame writers need to know
    of the request under way. cells.Cell is the real one; this idle one
    stands in before the first request, so readers never check for None."""

    id = ""
    qid = '""'  # id as a JSON string, ready to put in a frame
    running = False  # the cell's code may run: SIGINT raises KeyboardInterrupt
    positioning = False  # its rich frames get position marks
    interrupted = False  # a SIGINT landed in it
    ack = b""  # its "interrupted" frame line
    ack_owed = False  # the SIGINT handler could not write ack (a send was under way)
    last_fd = 0  # the output fd the runner's own streams wrote last in it
    deferring = False  # a child is being started: SIGINT sets deferred instead of raising
    deferred = False
    pos = 0  # positioned frames sent in it
    exited = False  # it raised SystemExit: done says "exit"
    exit_status = 0  # python3's exit status for it, when not 0
    exit_message = None  # what python3 prints for it on stderr (a code that is not an int)


_cur = _Request()


# --- frames ---------------------------------------------------------------


def _frame(kind, qid=None, **fields):
    """Every frame line the runner sends is built here: kind, the request's id
    (a JSON string) unless None, then fields, whose values are JSON text."""
    line = '{"type":"%s"' % kind
    if qid is not None:
        line += ',"id":' + qid
    for k, v in fields.items():
        line += ',"%s":%s' % (k, v)
    return line + "}\n"


_POSITIONED = tuple('{"type":"%s"' % t for t in ("display", "update_display", "clear_output", "result", "error", "input"))


def _send(line, hold=False):
    """Write one frame line to fd 3, whole, or not at all if it is too long.
    With hold, the line goes out with the next frame (or the flusher's next
    tick): a result is nearly always followed at once by its done."""
    if _forked:
        return  # a fork() child of a cell: only the runner itself speaks
    if not _cur.id and not line.startswith(_NEEDS_NO_CELL):
        line = _without_cell(line)
        if line is None:
            return
    data = line.encode()
    if len(data) > MAX_LINE:
        data = _warning_line(
            "a %s frame of %d bytes exceeds the %d-byte line limit and was dropped; "
            "write large data to a file instead" % (line[9:line.find('"', 9)], len(data), MAX_LINE)
        ).encode()
    # A frame that has a place among the cell's text is preceded by a
    # position mark on fd 1 and fd 2 (frames doc, "Order"), so the host can
    # put it exactly there; a dropped frame gets none.
    positioned = _cur.positioning and _nonce and len(data) <= MAX_LINE and line.startswith(_POSITIONED)
    if positioned:
        _flush_ours()
    # SIGINT is held off while marks go out with their frame; a frame of a
    # cell that wrote no text needs no marks, and spares the two syscalls.
    marks = positioned and (_dirty[1] or _dirty[2])
    _write_frame(data, positioned, hold_sigint=marks or len(data) > 4096, hold=hold)


_NEEDS_NO_CELL = ('{"type":"warning"', '{"type":"ready"')
_loading = ""  # what core is loading at start-up ("extension module PATH"), for _without_cell
_NOUNS = {"display": "a display", "update_display": "a display update", "result": "a result",
          "error": "an error", "input": "a request for input"}


def _without_cell(line):
    """A cell's frame sent before the first request (an extension module at
    load, a thread it started) has no cell to name in its id, which the host
    requires: it goes out as a warning without id that carries its text, as
    what a module prints at load does. None drops it (a clear_output: nothing
    is shown yet)."""
    try:
        f = _core._own("json").loads(line)
    except ValueError:
        f = {}
    kind = f.get("type")
    if kind == "clear_output":
        return None
    if kind == "error":
        text = "\n".join(f.get("traceback") or ["%s: %s" % (f.get("ename"), f.get("evalue"))])
    elif kind == "input":
        text = "input() fails in start-up code as in a cell: %r" % f.get("prompt", "")
    else:
        text = (f.get("bundle") or {}).get("text/plain") or ""
    return _warning_line("%s came at start-up%s, before any cell, so no cell can show it%s" % (
        _NOUNS.get(kind, "a %s frame" % kind), " from " + _loading if _loading else "",
        "; it was: " + str(text)[:4000] if text else ""))


def _write_frame(data, positioned, hold_sigint, hold=False):
    """Write one frame line to fd 3 under the send lock, after its position
    marks when positioned (see _place), behind a held line. With hold_sigint,
    SIGINT is held off around the lock, not inside it, so an interrupt that
    was held is handled with the lock free and acknowledged at once."""
    global _held
    old = _signal.pthread_sigmask(_signal.SIG_BLOCK, (_SIGINT,)) if hold_sigint else None
    try:
        with _send_lock:
            if positioned:
                data = _place(data)[0]
            _pay_ack()  # first: an owed ack must not follow the cell's done
            if hold:
                _held += data
                return
            if _held:
                data, _held = _held + data, b""
            _write_frame_bytes(data)
    except BrokenPipeError:
        os._exit(1)  # the host is gone; nobody is left to report to
    finally:
        if old is not None:
            _signal.pthread_sigmask(_signal.SIG_SETMASK, old)


def _place(data):
    """Position marks for a positioned frame line, under the send lock: a
    mark numbered by the frame's place in the cell goes now to each of fd 1
    and 2 that holds bytes since its last mark; a clean one owes it before
    its next bytes instead (_pay). The line says its number and the fds that
    got no mark, for which the host checks that it has routed all it read.
    Returns the line and those fds."""
    cell = _cur
    cell.pos = k = cell.pos + 1
    unmarked = _clean()
    mark = None
    for fd in _fds:
        if unmarked & fd:
            _owed[fd] = k
        else:
            if mark is None:
                mark = b"\x00\x1eEVH%s:\x02%d\x1e\x00" % (_nonce, k)
            _mark(fd, mark)
            _dirty[fd] = False
            _owed[fd] = 0
    if unmarked:
        return b'%s,"pos":%d,"unmarked":%d}\n' % (data[:-2], k, unmarked), unmarked
    return b'%s,"pos":%d}\n' % (data[:-2], k), 0


def _pay(fd):
    """Write the position mark fd owes, before bytes the runner's writers put
    on it: the host then holds what follows until that frame is out."""
    if _forked or not _nonce:
        return
    with _send_lock:
        k = _owed[fd]
        if k:
            _owed[fd] = 0
            _mark(fd, b"\x00\x1eEVH%s:\x02%d\x1e\x00" % (_nonce, k))


def _touch(fd):
    """The runner's writers are about to put bytes on fd 1 or 2."""
    if fd == 2 and len(_fds) == 1:
        fd = 1  # merged: fd 2 is fd 1's pipe
    if _held:
        _send_held(False)
    if _owed[fd]:
        _pay(fd)
    _dirty[fd] = True


def _touch_both():
    """A child process may write to both: mark them as written."""
    _touch(1)
    if len(_fds) > 1:
        _touch(2)


def merge():
    """fd 2 is fd 1's pipe (stdio.take, EVALHOST_MERGED): marks go on fd 1
    alone, and a frame never names fd 2 unmarked (the host reads no fd 2)."""
    global _fds, _fd_bits
    _fds, _fd_bits = (1,), 1
    _dirty[2] = False


def _clean(known=0):
    """The fds of _fds (as bits: fd 1 is 1, fd 2 is 2) that hold no bytes
    since their last mark: the runner's writers put none there (_dirty) and
    the host has read all a writer the runner cannot see (C code in this
    process, a child) left there (FIONREAD). known: fds found clean a moment
    ago, not asked again. Under the send lock, whose holder alone uses the
    ioctl's buffer. One call and no allocation for both pipes: a quiet cell
    asks this once, as its result goes with done. The first asks no one:
    importing fcntl and termios for it cost a one-shot run ~0.4 ms, and two
    marks cost two writes; the warm-up or the next cell imports them."""
    global _ioctl_wanted
    clean = known
    ioctl = _ioctl
    if ioctl is None:
        if not _ioctl_wanted:
            _ioctl_wanted = True
            return clean  # unknown: every pipe gets a mark
        ioctl = _fionread()
    if not ioctl:
        return clean  # unknown: every pipe may hold bytes
    for fd in _fds:
        if clean & fd or _dirty[fd]:
            continue
        try:
            ioctl[0](_pipes[fd], ioctl[1], _fionread_buf, True)
        except Exception:
            continue  # unknown: it may hold bytes
        if _fionread_buf == b"\0\0\0\0":
            clean |= fd
    return clean


# FIONREAD's answer, written in place: with an immutable argument ioctl
# copies it into new bytes, which cost more than the system call.
_fionread_buf = bytearray(4)


def _fionread():
    """(fcntl.ioctl, FIONREAD), imported on first use (the warm-up's, when
    the runner has been idle); False where there is none."""
    global _ioctl
    if _ioctl is None:
        try:
            _ioctl = (_core._own("fcntl").ioctl, _core._own("termios").FIONREAD)
        except Exception:
            _ioctl = False
    return _ioctl


def _send_done(cell, status, cancelled, last=None):
    """The cell's end: a sync mark on each of fd 1 and 2 that holds bytes
    since its last mark, then done, behind the held lines and last, in one
    write. last is a positioned frame line (str) kept for this write, the
    cell's result (cells.Cell.keep_result), placed here: a pipe its
    placement found empty, a moment ago under this lock, is not asked again
    for done (nothing was written to it since), which spares a quiet cell
    two of its four FIONREAD calls. The interpreter's last cell (the
    request's "last": its exit follows) marks every pipe: what the exit
    writes there (an atexit handler's print) comes after done, and with no
    end mark before it the host took it for the cell's own, sent ahead of
    a frame still waiting (the error run printed after the atexit's bye)."""
    global _held
    if _forked:
        return
    try:
        with _send_lock:
            head = _held
            unmarked = 0
            if last is not None:
                last = last.encode()
                if _nonce:
                    last, unmarked = _place(last)
                head += last
            if _nonce:
                if cell.last:
                    unmarked = 0
                elif unmarked != _fd_bits:  # else all found clean by _place
                    unmarked = _clean(unmarked)
                mark = None
                for fd in _fds:
                    _owed[fd] = 0
                    if not unmarked & fd:
                        if mark is None:
                            mark = b"\x00\x1eEVH" + _nonce + b":" + cell.id.encode("utf-8", "surrogatepass") + b"\x1e\x00"
                        _mark(fd, mark)
                        _dirty[fd] = False
            else:
                for fd in _fds:
                    _owed[fd] = 0
            _pay_ack()
            _held = b""
            _write_frame_bytes(b'%s{"type":"done","id":%s,"status":"%s","executionCount":%d,"cancelled":%s%s%s}\n' % (
                head, cell.qid.encode(), status.encode(), _core._count, b"true" if cancelled else b"false",
                _exit_fields(cell) if cell.exited else b"", b',"unmarked":%d' % unmarked if unmarked else b""))
    except BrokenPipeError:
        os._exit(1)


def _hold(data):
    """Hold a frame line (bytes) that needs no position: it goes out with
    the next frame, the cell's text, or the flusher's next tick."""
    global _held
    if _forked:
        return
    try:
        with _send_lock:
            _pay_ack()
            _held += data
    except BrokenPipeError:
        os._exit(1)


def _send_held(wait=True):
    """Write a held line now: from the flusher, so it waits no longer than
    a text flush, and before the cell's text (wait=False), so the host never
    holds text for a started frame. Without wait it gives up when the lock
    is taken: its holder is sending, and takes the held line along."""
    global _held
    if _forked or not _held or not _send_lock.acquire(wait):
        return
    try:
        data, _held = _held, b""
        if data:
            _write_frame_bytes(data)
    except BrokenPipeError:
        os._exit(1)
    finally:
        _send_lock.release()


def _warning_line(message, qid=None):
    return _frame("warning", qid or None, message=_q(message))


def _warn(message, qid=None):
    _send(_warning_line(message, qid))


def _exit_status(code, text=None):
    """python3's exit status for SystemExit(code), and the text it prints
    on stderr for it (None for an int): an int is cast to a C int, as
    (int)PyLong_AsLong(code) does (2**32+3 is 3), or -1 past a 64-bit long,
    where that fails; anything else is printed, 1. text: str(code), when
    taken already ("" when that failed)."""
    if isinstance(code, int):
        if not -(1 << 63) <= code < (1 << 63):
            return -1, None
        return (code + (1 << 31)) % (1 << 32) - (1 << 31), None
    if text is None:
        try:
            text = str(code)
        except Exception:  # python3 prints nothing it cannot str(), and exits 1
            text = ""
    # as python3's stderr writes it (errors="backslashreplace"): a lone
    # surrogate is "\\udcff", not the U+FFFD a JSON decoder would make of it
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    if len(text) > _EXIT_MESSAGE_MAX:
        # The done frame must fit a line (it is the cell's end): its head, as
        # the error frame's bound says of other large data.
        more = len(text) - _EXIT_MESSAGE_MAX
        text = "%s\n[... %d more character%s of the exit message]" % (text[:_EXIT_MESSAGE_MAX], more, "" if more == 1 else "s")
    return 1, text


# An exit message's characters in a done frame: 6 bytes each at worst
# (\uXXXX), with room for the frame's other fields.
_EXIT_MESSAGE_MAX = (MAX_LINE - 4096) // 6


def _exit_fields(cell):
    out = b',"exit":true'
    if cell.exit_status:
        out += b',"exitStatus":%d' % cell.exit_status
    if cell.exit_message is not None:
        out += b',"exitMessage":' + _q(cell.exit_message).encode()
    return out


def _send_plain_error(ename, evalue):
    _send(_frame("error", _cur.qid, ename=_q(ename), evalue=_q(evalue), traceback="[%s]" % _q("%s: %s" % (ename, evalue))))


# --- the runner's own writers of fd 1/2 ------------------------------------


class _TrackedFileIO(io.FileIO):
    """fd 1 or 2 under sys.stdout/sys.stderr. A write that switches from one
    to the other is preceded by a stream sync, so the host can keep the
    order of the two pipes (frames doc, "Order"). Buffered writers look
    write up once per flush, not per print.

    write is a property: it does that work and hands the BufferedWriter
    FileIO's own write, which the buffer calls from C. A write of Python
    code raised a KeyboardInterrupt at the end of its call of FileIO.write,
    after write(2) took the bytes but before the buffer counted them, so
    the buffer wrote them again; the buffer checks for signals itself once
    its count is right."""

    def __init__(self, *args, **kwargs):
        io.FileIO.__init__(self, *args, **kwargs)
        # The type is passed: 3.12.1 crashes binding a C method that takes
        # its class without one.
        self._evh_write = io.FileIO.write.__get__(self, io.FileIO)

    @property
    def write(self):
        cell = _cur
        fd = self._evh_fd
        if cell.last_fd != fd:
            if cell.last_fd:
                _sync_streams()
            cell.last_fd = fd
        if _held:
            _send_held(False)
        if _owed[fd]:
            _pay(fd)
        _dirty[fd] = True
        return self._evh_write


def _sync_streams():
    """A position mark on fd 1 and fd 2 and a sync frame: text written before
    it on either pipe reaches the host's consumer before text written after.
    It never flushes: it runs inside a stream's flush."""
    if not (_cur.positioning and _nonce) or _forked:
        return
    _write_frame(_frame("sync", _cur.qid).encode(), True, hold_sigint=True)


def _flush_ours():
    """Flush only the runner's own streams: safe from another thread."""
    for s in _streams:
        try:
            s.flush()
        except Exception:
            pass


# --- interrupts and raw writes ---------------------------------------------


def _ack_interrupt():
    """Tell the host its interrupt landed, so it stops its wake-ups (frames
    doc, "interrupted"). The handler may run inside a send, so it never waits
    for the send lock: the frame is then owed, and the send writes it."""
    cell = _cur
    if _forked or not cell.ack:
        return
    if _send_lock.acquire(False):
        try:
            _write_frame_bytes(cell.ack)
        finally:
            _send_lock.release()
    else:
        cell.ack_owed = True


def _write_frame_bytes(data):
    """Write data to the frames pipe whole; the caller holds the send lock.
    A write that fails once a cell's signal handler moved the pipe as it
    waited (os.write runs handlers on EINTR, then retries) goes again to
    where the pipe is now."""
    fd = _frames_fd
    try:
        n = _os_write(fd, data)
    except OSError:
        if fd == _frames_fd:
            raise
        n = 0
    if n == len(data):
        return  # nearly always: one write, no view to make
    view = memoryview(data)[n:]
    while view:
        fd = _frames_fd
        try:
            view = view[_os_write(fd, view):]
        except OSError:
            if fd == _frames_fd:
                raise


def _pay_ack():
    """Write an interrupted frame owed by the handler; under the send lock."""
    cell = _cur
    if cell.ack_owed:
        cell.ack_owed = False
        _write_frame_bytes(cell.ack)


def _mark(fd, mark):
    while mark:
        pipe = _pipes[fd]
        try:
            mark = mark[_os_write(pipe, mark):]
        except OSError:
            if pipe == _pipes[fd]:
                return  # the host closed that pipe; the done frame still tells it


# --- the runner's own descriptors, out of the cells' way ------------------


_close, _closerange, _dup2, _fdopen = os.close, os.closerange, os.dup2, os.fdopen
_EBADF, _EMFILE = 9, 24  # errno's, on Linux and macOS alike
# The runner's descriptors go just below this: the kernel's first fd table
# holds 64. Growing it with threads running waits for an RCU grace period
# (at 1020-1023 after ready, `run -c pass` took 15 ms longer), and every
# fork copies the grown table (+25 us at 1024).
_TOP = 64

_own_fds = frozenset()  # the runner's descriptors, which the os wrappers spare
_MAIN_THREAD = _thread.get_ident()  # wire loads in it: where signal handlers run
_requests = 0  # the requests pipe: core's copy of fd 0, then moved (Requests reads it)


def take_fds():
    """Move the frames and requests pipes below _TOP, copy the stdout and
    stderr pipes there for the marks (close-on-exec, all), and guard them;
    at start-up, before any thread."""
    global _frames_fd, _requests, _pipes
    _frames_fd = _move(_frames_fd)
    _requests = _move(_requests)
    pipes = list(_pipes)
    for fd in _fds:  # fd 1, and fd 2 unless it is fd 1's pipe
        pipes[fd] = _move(fd, keep=True)
    _pipes = pipes
    _guard()
    os.register_at_fork(after_in_child=_after_fork_child)
    os.close, os.closerange, os.dup2, os.fdopen = close, closerange, dup2, fdopen
    posix = sys.modules.get(os.name)  # the module os took them from (posix.close is os.close)
    if posix is not None and getattr(posix, "close", None) is _close:
        posix.close, posix.closerange, posix.dup2 = close, closerange, dup2


def _guard():
    global _own_fds
    fds = [_frames_fd, _requests] + [fd for i, fd in enumerate(_pipes) if fd != i]
    _own_fds = frozenset(fd for fd in fds if fd > 2)


def _free(above=False):
    """The highest free descriptor below _TOP; with above (a cell took them
    all), the lowest from _TOP to the soft limit; or None."""
    fds = range(_TOP - 1, 2, -1)
    if above:
        try:
            fds = range(_TOP, os.sysconf("SC_OPEN_MAX"))
        except (OSError, ValueError):
            return None
    for fd in fds:
        if fd not in _own_fds:
            try:
                os.get_inheritable(fd)
            except OSError:
                return fd
    return None


def _move(fd, keep=False):
    """fd moved (with keep, copied) to the highest free descriptor below
    _TOP, if above fd and within the soft limit."""
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


def _index(fd):  # fd as the os functions read it, or None where they refuse it
    if type(fd) is int:
        return fd
    try:
        return type(fd).__index__(fd)
    except Exception:
        return None


def close(fd):
    if _own_fds and _index(fd) in _own_fds:
        raise _ebadf()  # as python3's os.close of a descriptor it never opened
    return _close(fd)


def closerange(fd_low, fd_high, /):
    lo, hi = _index(fd_low), _index(fd_high)
    if not _own_fds or lo is None or hi is None:
        return _closerange(fd_low, fd_high)
    for fd in sorted(_own_fds):
        if lo <= fd < hi:
            _closerange(lo, fd)
            lo = fd + 1
    return _closerange(lo, hi)


def dup2(fd, fd2, inheritable=True):
    if _own_fds:
        if _index(fd) in _own_fds:
            raise _ebadf()
        if _index(fd2) in _own_fds:
            return _dup2_over(fd, _index(fd2), inheritable)
    return _dup2(fd, fd2, inheritable)


def fdopen(fd, *args, **kwargs):
    if _own_fds and _index(fd) in _own_fds:
        raise _ebadf()  # as python3's io.open finds it: not open
    return _fdopen(fd, *args, **kwargs)


for _f, _real in ((close, _close), (closerange, _closerange), (dup2, _dup2), (fdopen, _fdopen)):
    _f.__doc__, _f.__module__, _f.__wrapped__ = _real.__doc__, _real.__module__, _real  # inspect.signature's


def _dup2_over(fd, fd2, inheritable):
    """os.dup2 onto a runner descriptor: the runner's moves to another free
    one first; the cell gets fd2 as python3 would. Signals wait meanwhile
    (a KeyboardInterrupt would leave the move half done); one caught just
    before still runs its handler, which may move too (_move_for)."""
    old = _signal.pthread_sigmask(_signal.SIG_BLOCK, _signal.valid_signals())
    try:
        locked = _lock_for_move()
        try:
            moved = _move_for(fd2)
        finally:
            if locked:
                _send_lock.release()
        try:
            return _dup2(fd, fd2, inheritable)
        except BaseException:
            if moved:
                _close(fd2)  # the runner's old copy: python3 has nothing there
            raise
    finally:
        _signal.pthread_sigmask(_signal.SIG_SETMASK, old)


def _lock_for_move():
    """The send lock (whether taken), so no frame or mark goes to a
    descriptor as it becomes the cell's. In the main thread a signal
    handler of the cell's may have cut into a send or a move (a function
    that takes the lock is on the stack): a wait would never end, and that
    send reads the number for each write, again after one that failed
    (_write_frame_bytes). Otherwise another thread holds it, and lets go."""
    if _send_lock.acquire(False):
        return True
    if _thread.get_ident() == _MAIN_THREAD:
        f = sys._getframe(1)
        while f is not None:
            if f.f_code in _LOCKERS:
                return False
            f = f.f_back
    return _send_lock.acquire()


def _move_for(fd2):
    """Move the runner's descriptor fd2 to another free one; False if it is
    not the runner's now: a handler pending as signals were blocked ran at
    the first call after, moved it and may have closed fd2, which _free
    would then offer as the place to move to (dup3 onto itself: EINVAL)."""
    global _frames_fd, _requests, _pipes
    if fd2 not in _own_fds:
        return False
    to = _free()
    if to is None:
        to = _free(above=True)
        if to is None:
            raise OSError(_EMFILE, os.strerror(_EMFILE))
    _dup2(fd2, to, False)
    if fd2 == _frames_fd:
        _frames_fd = to
    elif fd2 == _requests:
        _requests = to
    elif fd2 in _pipes[1:]:
        _pipes = [to if p == fd2 else p for p in _pipes]
    else:
        _close(to)  # a signal handler's move of fd2 came between: it is not the runner's now
        return False
    _guard()
    return True


# The functions that take the send lock (_lock_for_move).
_LOCKERS = frozenset(f.__code__ for f in (_write_frame, _send_done, _hold, _send_held, _pay, _ack_interrupt, _dup2_over))


def _after_fork_child():
    """A fork() child of a cell never speaks for the runner: its copies go."""
    global _own_fds
    for fd in _own_fds:
        try:
            _close(fd)
        except OSError:
            pass
    _own_fds = frozenset()


class Requests(getattr(sys.modules.get("_io"), "_RawIOBase", io.RawIOBase)):  # the C base: no ABC to build
    """The requests pipe, read at the number held now (a move changes it).

    on_idle, when set, is called once, the first time a read finds no
    request buffered and none in the pipe (the runner is about to wait):
    the warm-up begins there: never in a one-shot run of one cell, whose
    cell and exit are in the pipe by the first read; after the first cell
    of a run of several, whose host sends each cell after the one before
    it ended."""

    on_idle = None

    def readable(self):
        return True

    def readinto(self, b):
        idle = self.on_idle
        if idle is not None:
            os.set_blocking(_requests, False)
            try:
                return os.readv(_requests, (b,))
            except BlockingIOError:
                self.on_idle = None
            finally:
                os.set_blocking(_requests, True)
            idle()
        return os.readv(_requests, (b,))
