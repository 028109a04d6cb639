"""evalhost runner bootstrap: `python runner.py`, started by the evalhost host.

The runner itself is core.py beside this file; ipy.py (IPython
compatibility) is loaded by core the same way, only when a cell needs it. A script is compiled on every
start and never cached, so this bootstrap stays tiny and loads core.py
through its own bytecode cache (__pycache__/<name>.<tag>.evh, written
atomically, keyed by the interpreter's magic number). The directory is named
by a content hash, so core.py never changes under its cache.
"""

import sys


def _load(here, name="core"):
    import marshal
    import os
    from _frozen_importlib_external import MAGIC_NUMBER

    src = os.path.join(here, name + ".py")
    cache = os.path.join(here, "__pycache__", "%s.%s.evh" % (name, sys.implementation.cache_tag))
    try:
        with open(cache, "rb") as f:
            data = f.read()
        if data[:4] == MAGIC_NUMBER:
            return src, marshal.loads(data[4:])
    except (OSError, ValueError, EOFError, TypeError):
        pass
    with open(src, "rb") as f:
        code = compile(f.read(), src, "exec", 0, True)
    try:
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        tmp = "%s.%d.tmp" % (cache, os.getpid())
        with open(tmp, "wb") as f:
            f.write(MAGIC_NUMBER + marshal.dumps(code))
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
    exec(code, core.__dict__)
    core._loader = _load  # core loads ipy.py (IPython compatibility) through it on first use
    core.main(sys._getframe().f_code.co_filename)


if __name__ == "__main__":
    _boot()
