"""evalhost prelude: helpers every Python session starts with.

Run once per interpreter in the user namespace, by runner.py and by the
Jupyter gateway backend's kernels alike, so it depends on nothing but the
standard library and imports lazily: defining these costs microseconds.
"""


def _evh_own(name):
    """The module name, imported as the runner's own: never from the cwd or
    a directory a cell added (the runner's imports.py). In a gateway kernel,
    where no runner runs, a plain import."""
    import sys

    core = sys.modules.get("_evalhost_runner")
    if core is not None:
        return core._own(name)
    __import__(name)
    return sys.modules[name]


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
    import os

    difflib = _evh_own("difflib")

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


# --- tool bridge (contract: bridge/doc.go) ---------------------------------


class ToolError(Exception):
    """A tool call that failed: the host's message, or why the bridge could not be reached."""


class _ToolBridge:
    """tool.NAME(**args) or tool("NAME", **args) calls a host tool and returns its value.

    Blocking and thread-safe (one keep-alive connection per thread). From
    asyncio code use `await tool.acall("NAME", **args)` (or
    `await asyncio.to_thread(tool.NAME, ...)`) so the event loop keeps running.
    A tool literally named "acall" is reached as tool("acall", ...).
    """

    def __init__(self):
        # threading.local itself, without importing threading: that module and
        # what it imports (functools, collections, ...) cost a one-shot run
        # ~9 ms of start-up here, a third of the interpreter's own (issue 16).
        import _thread

        self._local = _thread._local()

    def __call__(self, name, /, **args):
        return self._call(name, args)

    async def acall(self, name, /, **args):
        """Call a tool from asyncio code without blocking the event loop."""
        asyncio = _evh_own("asyncio")

        if hasattr(asyncio, "to_thread"):
            return await asyncio.to_thread(self._call, name, args)
        # 3.8: to_thread is 3.9's
        return await asyncio.get_running_loop().run_in_executor(None, self._call, name, args)

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)

        def call(**args):
            return self._call(name, args)

        call.__name__ = call.__qualname__ = name
        return call

    def __repr__(self):
        return "<tool bridge: tool.NAME(**args) or tool('NAME', **args)>"

    def _call(self, name, args):
        import os

        json = _evh_own("json")

        if not isinstance(name, str) or not name:
            raise ToolError("tool name must be a non-empty string, got %r" % (name,))
        env = os.environ
        if env.get("PI_TOOL_BRIDGE_NONE") == "1":
            raise ToolError("unknown tool %r: no tools are configured (pass --tool NAME=COMMAND)" % (name,))
        vals = [(k, env.get(k)) for k in ("PI_TOOL_BRIDGE_URL", "PI_TOOL_BRIDGE_TOKEN", "PI_TOOL_BRIDGE_SESSION", "EVALHOST_RUN")]
        missing = [k for k, v in vals if not v]
        if missing:
            raise ToolError(
                "tool bridge is unavailable: %s not set (tools work only in cells run by evalhost with a tool bridge)"
                % ", ".join(missing)
            )
        url, token, session, run = (v for _, v in vals)
        try:
            body = json.dumps({"session": session, "run": run, "name": name, "args": args})
        except (TypeError, ValueError) as e:
            raise ToolError("tool %r: arguments are not JSON-serialisable: %s" % (name, e)) from None
        status, data = self._post(url, token, body.encode())
        try:
            reply = json.loads(data)
        except ValueError:
            raise ToolError("tool %r: bridge answered HTTP %d with non-JSON %r" % (name, status, data[:200])) from None
        if not isinstance(reply, dict):
            raise ToolError("tool %r: bridge answered HTTP %d with %r, not an object" % (name, status, data[:200]))
        if 200 <= status < 300 and reply.get("ok") is True:
            return reply.get("value")
        raise ToolError(reply.get("error") or "tool %r failed (HTTP %d)" % (name, status))

    def _post(self, url, token, body):
        client = _evh_own("http.client")

        host, port, path = self._target(url)
        headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
        for attempt in (0, 1):
            conn, fresh = self._conn(host, port)
            try:
                conn.request("POST", path, body, headers)
                resp = conn.getresponse()
                return resp.status, resp.read()
            except (client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as e:
                self._drop(conn)
                # A kept-alive connection the server closed while idle: retry once on a new one.
                if fresh or attempt:
                    raise ToolError("tool bridge connection failed: %s" % e) from None
            except OSError as e:
                self._drop(conn)
                raise ToolError("tool bridge is unreachable at %s: %s" % (url, e)) from None
            except KeyboardInterrupt as e:
                self._drop(conn)  # interrupted mid-request: the connection's state is unknown
                # The cell's traceback ends at its tool call, not inside http.client.
                raise e.with_traceback(None)
            except BaseException:
                self._drop(conn)
                raise

    def _drop(self, conn):
        conn.close()
        self._local.conn = None

    def _target(self, url):
        t = self.__dict__.get("_parsed")
        if t is None or t[0] != url:
            u = _evh_own("urllib.parse").urlsplit(url)
            if u.scheme != "http" or not u.hostname:
                raise ToolError("tool bridge is unavailable: PI_TOOL_BRIDGE_URL %r is not an http://host:port URL" % url)
            t = self._parsed = (url, u.hostname, u.port, u.path.rstrip("/") + "/v1/tool")
        return t[1:]

    def _conn(self, host, port):
        client = _evh_own("http.client")

        c = getattr(self._local, "conn", None)
        if c is not None and (c.host, c.port) == (host, port):
            return c, False
        if c is not None:
            c.close()
        c = client.HTTPConnection(host, port, timeout=None)
        self._local.conn = c
        return c, True


tool = _ToolBridge()
