"""evalhost prelude: helpers every Python session starts with.

Run once per interpreter in the user namespace, by runner.py and by the
Jupyter gateway backend's kernels alike, so it depends on nothing but the
standard library and imports lazily: defining these costs microseconds.
"""


def read(path, encoding="utf-8"):
    """Return the text of the file at path (undecodable bytes replaced)."""
    with open(path, encoding=encoding, errors="replace") as f:
        return f.read()


def write(path, text, encoding="utf-8"):
    """Write text (or bytes) to path, creating parent directories; return the path."""
    import os

    parent = os.path.dirname(os.path.abspath(path))
    os.makedirs(parent, exist_ok=True)
    if isinstance(text, (bytes, bytearray)):
        with open(path, "wb") as f:
            f.write(text)
    else:
        with open(path, "w", encoding=encoding) as f:
            f.write(text)
    return path


def env(name=None, default=None):
    """Return os.environ[name] (or default), or a copy of the whole environment."""
    import os

    if name is None:
        return dict(os.environ)
    return os.environ.get(name, default)


def tree(path=".", depth=2, hidden=False):
    """Print the directory tree under path, depth levels deep."""
    import os

    def walk(d, prefix, level):
        try:
            names = sorted(os.listdir(d))
        except OSError as e:
            print(prefix + "[%s]" % (e.strerror or e))
            return
        if not hidden:
            names = [n for n in names if not n.startswith(".")]
        for i, n in enumerate(names):
            last = i == len(names) - 1
            full = os.path.join(d, n)
            isdir = os.path.isdir(full) and not os.path.islink(full)
            print(prefix + ("└── " if last else "├── ") + n + ("/" if isdir else ""))
            if isdir and level < depth:
                walk(full, prefix + ("    " if last else "│   "), level + 1)

    print(path.rstrip("/") + "/" if path != "/" else "/")
    walk(path, "", 1)


def diff(a, b, context=3):
    """Print a unified diff of a and b: two texts, or two paths of existing files."""
    import difflib
    import os

    def load(x):
        if isinstance(x, str) and "\n" not in x and os.path.isfile(x):
            return read(x), x
        return x, None

    ta, na = load(a)
    tb, nb = load(b)
    lines = list(
        difflib.unified_diff(
            ta.splitlines(True), tb.splitlines(True), na or "a", nb or "b", n=context
        )
    )
    if not lines:
        print("(no differences)")
        return
    for ln in lines:
        print(ln, end="" if ln.endswith("\n") else "\n")
