"""evalhost runner bootstrap: `python runner.py`, started by the evalhost host.

The runner itself is core.py beside this file; its other modules are
loaded by core the same way: wire.py (the frames pipe) as core loads, the
rest, the IPython compatibility (ipy*.py) among them, each only when
needed. A script is compiled on every start and never cached, so this
bootstrap stays tiny and loads the others through its own bytecode cache:
__pycache__/<name>.<tag>.evh, written atomically (0600, in a 0700 dir).

A cache file is trusted only when it is owned by this user, writable by no
one else, and its header matches both the source beside it and its own
code: magic number, then the interpreter's keyed source hash (the one
CHECKED_HASH .pyc files use) of the .py file, then that hash of the
marshalled code. A stale, damaged or swapped payload is recompiled and
rewritten, never run. The check reads the .py file and hashes ~100 KB,
tens of microseconds.
"""

import sys


def _load(here, name="core"):
    import _imp
    import marshal
    import os
    from _frozen_importlib_external import MAGIC_NUMBER  # loaded at every start-up

    src = os.path.join(here, name + ".py")
    cache = os.path.join(here, "__pycache__", "%s.%s.evh" % (name, sys.implementation.cache_tag))
    with open(src, "rb") as f:
        source = f.read()
    raw = int.from_bytes(MAGIC_NUMBER, "little")  # the key CHECKED_HASH .pyc files use
    key = _imp.source_hash(raw, source)
    try:
        with open(cache, "rb") as f:
            st = os.fstat(f.fileno())
            data = f.read()
        # Another user's (or a loose) file could hold anything: never run it.
        if st.st_uid == os.geteuid() and not st.st_mode & 0o022 and data[:4] == MAGIC_NUMBER and data[4:12] == key:
            payload = data[20:]
            if data[12:20] == _imp.source_hash(raw, payload):
                return src, marshal.loads(payload)
    except (OSError, ValueError, EOFError, TypeError):
        pass
    # optimize=0 whatever -O/-OO the interpreter has: the cache is one for
    # every start, and the runner's own asserts and docstrings stay.
    code = compile(source, src, "exec", 0, True, 0)
    try:
        os.makedirs(os.path.dirname(cache), 0o700, exist_ok=True)
        payload = marshal.dumps(code)
        tmp = "%s.%d.tmp" % (cache, os.getpid())
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with open(fd, "wb") as f:
            f.write(MAGIC_NUMBER + key + _imp.source_hash(raw, payload) + payload)
        os.replace(tmp, cache)
    except OSError:
        pass  # a read-only runner dir only costs the compile on each start
    return src, code


def _boot():
    import os

    here = os.path.dirname(os.path.abspath(__file__))
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
