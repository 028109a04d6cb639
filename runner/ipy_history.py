"""IPython 9's record of each cell's outputs under --ipython, bounded.

IPython 9's HistoryManager keeps, for %notebook, everything a cell
printed (its tee of sys.stdout and sys.stderr), displayed, returned and
raised, in memory for the session's life: 2,000 cells of one 50 KB figure
grew the runner by 257 MiB, and a cell's printed log stayed whole. The
last LIMIT bytes of it are kept; older outputs keep a short text/plain, or
a note saying why they are gone.
"""

_core = globals()["_core"]

LIMIT = 32 << 20
_PLAIN = 4096  # a trimmed display or result keeps a text/plain this long
_NOTE = "[not kept: evalhost keeps the last %d MiB of a session's outputs in its history]" % (LIMIT >> 20)

_kept = _core._own("collections").deque()  # (size, entry) oldest first: a HistoryOutput, or an error's dict
_seen = set()  # id() of the entries in _kept
_total = [0]


def keep_display(sh, data):
    """A display, kept as IPython 9's own publisher keeps it, under the cell's count."""
    outputs = getattr(sh.history_manager, "outputs", None)
    if outputs is None:
        return
    entry = _core._own("IPython.core.history").HistoryOutput(output_type="display_data", bundle=data)
    outputs.setdefault(_core._count, []).append(entry)
    _account((entry,))


def cell_ended(sh, count):
    """What IPython kept of the cell itself (its prints, result and error)
    joins what the history holds."""
    hm = sh.history_manager
    entries = list(hm.outputs.get(count, ()))
    error = hm.exceptions.get(count)
    if isinstance(error, dict):
        entries.append(error)
    _account(entries)


def forget():
    """%reset cleared the history: nothing of it is held here either."""
    _kept.clear()
    _seen.clear()
    _total[0] = 0


def _account(entries):
    for e in entries:
        if id(e) not in _seen:
            n = _size(e)
            _kept.append((n, e))
            _seen.add(id(e))
            _total[0] += n
    while _total[0] > LIMIT and _kept:
        n, e = _kept.popleft()
        _seen.discard(id(e))
        _total[0] -= n
        _trim(e)


def _size(e):
    if isinstance(e, dict):
        return len(str(e.get("evalue", ""))) + sum(len(s) for s in e.get("traceback") or () if isinstance(s, str))
    n = 0
    for v in e.bundle.values():
        if isinstance(v, (str, bytes)):
            n += len(v)
        elif isinstance(v, list):  # a stream: the pieces written
            n += sum(len(s) for s in v if isinstance(s, str))
        else:  # JSON data
            try:
                n += len(repr(v))
            except Exception:
                pass
    return n


def _trim(e):
    if isinstance(e, dict):
        e["evalue"] = _short(str(e.get("evalue", "")))
        e["traceback"] = [_NOTE]
    elif e.output_type in ("out_stream", "err_stream"):
        e.bundle = {"stream": [_NOTE + "\n"]}
    else:
        e.bundle = {"text/plain": _short(e.bundle.get("text/plain"))}


def _short(text):
    return text if isinstance(text, str) and len(text) <= _PLAIN else _NOTE

