"""evalhost runner bootstrap: `python runner.py`, started by the evalhost host.

The runner itself is core.py beside this file; its other modules are
loaded by core the same way: wire.py (the frames pipe) as core loads, the
rest, the IPython compatibility (ipy*.py) among them, each only when
needed. A script is compiled on every start and never cached, so this
bootstrap stays tiny and loads the others through its own bytecode cache:
__pycache__/<name>.<tag>.evh, written atomically (0600, in a 0700 dir).

A cache file is trusted only when it is a regular file (not a link) of
this user's that no one else may write, whose header is the magic number,
the .py's inode, size, mtime and ctime (a stat: the source is not read),
then the payload's length. The host puts each .py in place by a rename (a
new inode) and checks them all at every start; any other write changes the
ctime, which no call sets back, save one in the clock tick of a compile's
read, and that one Path finds at the next start (its stamp does not hold)
and replaces. No device number: the .py and its cache share a file system,
and an NFS home has another device on each host. No hash of the payload (nor
has CPython's .pyc): only this user writes it, whole (a file created
exclusively, renamed over), and its length refuses a cut or extended one.
Anything else is recompiled and rewritten, never run.

This file itself is compiled by python at each start from it; once a start
has written its bytecode for the interpreter (bytecode.py), the host starts
that instead (runner/boot.go), and __file__ is in __pycache__.
"""

import sys


def _load(here, name="core"):
    import marshal
    import os
    from _frozen_importlib_external import MAGIC_NUMBER  # loaded at every start-up

    src = os.path.join(here, name + ".py")
    cache = os.path.join(here, "__pycache__", "%s.%s.evh" % (name, sys.implementation.cache_tag))
    st = os.stat(src)  # before any read: a write after it changes the key
    key = MAGIC_NUMBER + b"%d %d %d %d\n" % (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    n = len(key)
    try:
        fd = os.open(cache, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)  # a fifo would block
        try:
            st = os.fstat(fd)
            data = os.read(fd, st.st_size + 1)  # a byte more: a file that grew is not the one checked
        finally:
            os.close(fd)
        # Another user's (or a loose, or not a regular) file could hold anything: never run it.
        if (st.st_uid == os.geteuid() and st.st_mode & 0o170022 == 0o100000 and data[:n] == key
                and int.from_bytes(data[n : n + 8], "little") == len(data) - n - 8):
            return src, marshal.loads(data[n + 8 :])
    except (OSError, ValueError, EOFError, TypeError):
        pass
    with open(src, "rb") as f:
        source = f.read()
    # optimize=0 whatever -O/-OO the interpreter has: the cache is one for
    # every start, and the runner's own asserts and docstrings stay.
    code = compile(source, src, "exec", 0, True, 0)
    try:
        os.makedirs(os.path.dirname(cache), 0o700, exist_ok=True)
        payload = marshal.dumps(code)
        tmp = "%s.%d.tmp" % (cache, os.getpid())
        # O_EXCL: a file of this name is a writer's with this pid (in another pid namespace) or a dead one's: left be.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        with open(fd, "wb") as f:
            f.write(key + len(payload).to_bytes(8, "little") + payload)
        os.replace(tmp, cache)
    except Exception:  # OSError, or an audit hook's refusal (a sandbox's RuntimeError)
        pass  # a read-only runner dir only costs the compile on each start
    return src, code


def _boot():
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    if os.path.basename(here) == "__pycache__":  # started from its bytecode (runner/boot.go)
        here = os.path.dirname(here)
    src, code = _load(here)
    core = type(sys)("_evalhost_runner")
    core.__file__ = src
    sys.modules[core.__name__] = core
    # core loads its other modules (wire as it loads, the rest on first use) through _load
    core._loader = _load
    exec(code, core.__dict__)
    core.main(sys._getframe().f_code.co_filename)


if __name__ == "__main__":
    _boot()
