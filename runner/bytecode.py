"""runner.py's own bytecode, which the host starts the runner from.

python compiles the script it is given at every start (~0.5 ms for
runner.py, the parser's first use); given a .pyc it runs it, checking its
magic number and nothing else. So a start from runner.py that the host
asks to (EVALHOST_BOOT, runner/boot.go) writes runner.py's bytecode once
it has sent ready, and the host starts the next runner under this
interpreter from it.

The ask is the header's key (24 hex digits), the file's name in runner.py's
__pycache__ (the interpreter's: of its inode, size and times), then what
the key is of: the interpreter's and runner.py's inode, size, mtime and
change time, as the host found them. The file is written only when they are this runner's
own: sys.executable's (a launcher that runs another interpreter is not
the one the host found, and another's magic number would not run), and
those of the very runner.py read and compiled. Its header is this
interpreter's magic number then the key; 0600, written whole under
another name and renamed over, as runner.py's cache is. A name that is not
such a file's, or an ask that is not one, writes nothing.
"""

import marshal
import os
import sys


def _facts(st):
    return "%d %d %d %d" % (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _name_ok(name):
    stem = name[len("runner.") : -len(".pyc")]
    return (name.startswith("runner.") and name.endswith(".pyc") and len(stem) == 16
            and all(c in "0123456789abcdef" for c in stem))


def write(ask, source):
    """Write source's (runner.py's path, as the host gave it) bytecode as
    ask says; whatever fails only leaves the next start to compile it."""
    parts = ask.split(" ")
    if len(parts) != 10 or len(parts[0]) != 24 or not _name_ok(parts[1]):
        return
    try:
        key = bytes.fromhex(parts[0])
        if not sys.executable or _facts(os.stat(sys.executable)) != " ".join(parts[2:6]):
            return
        pycache = os.path.join(os.path.dirname(source), "__pycache__")
        os.makedirs(pycache, 0o700, exist_ok=True)
        path = os.path.join(pycache, parts[1])
        tmp = "%s.%d.tmp" % (path, os.getpid())
        # O_EXCL: a file of this name is a writer's with this pid (in another pid namespace) or a dead one's: left be.
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except Exception:  # OSError, ValueError, or an audit hook's refusal (a sandbox's RuntimeError)
        return
    try:
        with open(fd, "wb") as out:
            with open(source, "rb") as f:
                if _facts(os.fstat(f.fileno())) != " ".join(parts[6:10]):
                    raise ValueError("not the runner.py the host found")
                code = compile(f.read(), source, "exec", 0, True, 0)
            from _frozen_importlib_external import MAGIC_NUMBER

            out.write(MAGIC_NUMBER + key + marshal.dumps(code))
        os.replace(tmp, path)
    except Exception:
        try:
            os.unlink(tmp)
        except OSError:
            pass
