"""evalhost extension modules: the files EVALHOST_MODULES names, each run
into the user namespace at start-up. evalhost judged each one, and every
directory and link on its way, before naming it (runner.FindModules); here
each is opened once and run only when the open file is the one judged (its
device and inode) and still a regular file that no one else may write, of
this user's, root's or of whom it was owned by when judged (a safe
directory's owner), so nothing can be swapped in between (the gateway
backend does the same in Go: runner.Module.Source). Loaded by core only when
EVALHOST_MODULES names a module.
"""

import os


def unsafe(st, owner=None):
    """Why the open file with stat st may not be run, or None.

    As ssh with ~/.ssh: it must be owned by this user (or root, who can
    run code as anyone anyway), or by owner, whom it was owned by when
    evalhost judged it, and writable by no one else.
    """
    stat = globals()["_core"]._own("stat")
    me = os.geteuid()
    if not stat.S_ISREG(st.st_mode):
        return "it is not a regular file"
    if st.st_uid not in (me, 0, owner):
        return "it is owned by uid %d, not by you (uid %d)" % (st.st_uid, me)
    if st.st_mode & 0o022:
        return "it is writable by %s (mode %04o)" % (
            "group and others" if st.st_mode & 0o022 == 0o022 else "group" if st.st_mode & 0o020 else "others",
            stat.S_IMODE(st.st_mode),
        )
    return None


_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v", "\\": "\\\\", '"': '\\"'}


def _escaped(path):
    """path's characters as Go's strconv.Quote writes them, unquoted."""
    out = []
    for ch in path:
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:  # a byte that is not UTF-8, as os.fsdecode keeps it
            out.append("\\x%02x" % (o - 0xDC00))
        elif ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif o < 0x80:
            out.append("\\x%02x" % o)
        elif o < 0x10000:
            out.append("\\u%04x" % o)
        else:
            out.append("\\U%08x" % o)
    return "".join(out)


def shown(path):
    """path as a warning prints it, as trustdir.Shown: quoted Go-style when
    it holds a character that is not printable (a newline, an escape), so
    another user's name cannot fake a line of advice, or the terminal's."""
    return path if path.isprintable() else '"%s"' % _escaped(path)


def shell_word(path):
    """path as one shell word, as trustdir.ShellQuote: $'...' when shown
    would quote it, so the command prints on one line."""
    if path.isprintable():
        return globals()["_core"]._own("shlex").quote(path)
    return "$'%s'" % _escaped(path).replace("'", "\\'")


def refusal(path, why):
    # The name may be another user's to choose: the command quotes it.
    q = shell_word(path)
    return (
        "extension module %s was not loaded: %s, so another user could run code as you; "
        "if you trust it, make it yours and not writable by others (chown $(id -u) %s && chmod go-w %s)"
        % (shown(path), why, q, q)
    )


def sources(entries):
    """Yield (path, source, warning) for each [path, dev, ino, owner] of entries, in order.

    The source is read from the file opened once, after its fstat showed it
    is the file evalhost judged (dev and ino; None where there are none) and
    still safe (owner: its owner then, None where unknown); otherwise source
    is None and warning says why it is not run.
    O_NONBLOCK: a fifo put in its place must not hang the start.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    for entry in entries:
        path, dev, ino = entry[:3]
        owner = entry[3] if len(entry) > 3 and dev is not None else None
        try:
            fd = os.open(path, flags)
        except OSError as e:
            yield path, None, "extension module %s was not loaded: it cannot be opened (%s)" % (shown(path), e.strerror or e)
            continue
        source = None
        with open(fd, "rb") as f:
            st = os.fstat(fd)
            why = unsafe(st, owner)
            if why is None and dev is not None and (st.st_dev % (1 << 64), st.st_ino) != (dev, ino):
                why = "it is not the file evalhost checked (something was put in its place since)"
            if why is None:
                source = f.read()
        yield path, source, why and refusal(path, why)


def load_modules():
    """Run each module EVALHOST_MODULES names, in order; one refused or
    failing is a warning that names it, and the others still load."""
    core = globals()["_core"]
    entries = core._scan(os.environ.get("EVALHOST_MODULES", ""), 0)[0]
    for path, source, warning in sources(entries):
        if warning:
            core._warn(warning)
            continue
        core._exec_file(path, "extension module", source)
