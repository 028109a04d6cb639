"""evalhost extension modules: the *.py files of EVALHOST_MODULES, each run
into the user namespace at start-up unless another user could have written
it. Loaded by core only when EVALHOST_MODULES names a directory.
"""

import os

_core = globals()["_core"]
_wire = _core._wire


def unsafe(st, kind):
    """Why code from a file or dir with stat st could be another user's, or None.

    As ssh with ~/.ssh: it must be owned by this user (or root, who can
    run code as anyone anyway) and writable by no one else.
    """
    import stat

    me = os.geteuid()
    if kind == "file" and not stat.S_ISREG(st.st_mode):
        return "it is not a regular file"
    if st.st_uid not in (me, 0):
        return "it is owned by uid %d, not by you (uid %d)" % (st.st_uid, me)
    if st.st_mode & 0o022:
        return "it is writable by %s (mode %04o)" % (
            "group and others" if st.st_mode & 0o022 == 0o022 else "group" if st.st_mode & 0o020 else "others",
            stat.S_IMODE(st.st_mode),
        )
    return None


def refusal(what, path, why, kind):
    fix = "chown $(id -u) %s && chmod go-w %s" % (path, path)
    return (
        "%s %s %s not loaded: %s, so another user could run code as you; "
        "if you trust it, make it yours and not writable by others (%s)"
        % (what, path, "was" if kind == "file" else "and its modules were", why, fix)
    )


def load_modules():
    """Exec *.py from EVALHOST_MODULES; a later dir overrides a same-named module.

    A dir or file that another user owns or may write is refused with a
    warning that names it; the others still load.
    """
    chosen = {}
    for d in os.environ.get("EVALHOST_MODULES", "").split(os.pathsep):
        if not d:
            continue
        try:
            why = unsafe(os.stat(d), "dir")
            names = os.listdir(d)
        except FileNotFoundError:
            continue
        except OSError as e:
            _wire._warn("extension module dir %s unreadable: %s" % (d, e))
            continue
        if why:
            _wire._warn(refusal("extension module dir", d, why, "dir"))
            continue
        for n in names:
            if n.endswith(".py") and not n.startswith("."):
                chosen[n] = os.path.join(d, n)
    for n in sorted(chosen):
        _core._exec_file(chosen[n], "extension module", trusted=False)
