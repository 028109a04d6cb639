# The tool bridge helper, meant for runner/prelude.py: stdlib only, imports
# lazily (defining it costs microseconds). Contract: bridge/doc.go.


class ToolError(Exception):
    """A tool call that failed: the host's message, or why the bridge could not be reached."""


class _ToolBridge:
    """tool.NAME(**args) or tool("NAME", **args) calls a host tool and returns its value."""

    def __init__(self):
        import threading

        self._local = threading.local()  # one keep-alive connection per thread

    def __call__(self, name, /, **args):
        return self._call(name, args)

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
        import json
        import os

        url = os.environ.get("PI_TOOL_BRIDGE_URL")
        token = os.environ.get("PI_TOOL_BRIDGE_TOKEN")
        session = os.environ.get("PI_TOOL_BRIDGE_SESSION")
        run = os.environ.get("EVALHOST_RUN")
        missing = [k for k, v in (("PI_TOOL_BRIDGE_URL", url), ("PI_TOOL_BRIDGE_TOKEN", token),
                                  ("PI_TOOL_BRIDGE_SESSION", session), ("EVALHOST_RUN", run)) if not v]
        if missing:
            raise ToolError("tool bridge is unavailable: %s not set (tools work only in cells run by evalhost)"
                            % ", ".join(missing))
        try:
            body = json.dumps({"session": session, "run": run, "name": name, "args": args})
        except (TypeError, ValueError) as e:
            raise ToolError("tool %r: arguments are not JSON-serialisable: %s" % (name, e)) from None
        status, data = self._post(url, token, body.encode())
        try:
            reply = json.loads(data)
        except ValueError:
            raise ToolError("tool %r: bridge answered HTTP %d with non-JSON %r" % (name, status, data[:200])) from None
        if status == 200 and reply.get("ok") is True:
            return reply.get("value")
        raise ToolError(reply.get("error") or "tool %r failed (HTTP %d)" % (name, status))

    def _post(self, url, token, body):
        import http.client

        host, port, path = self._target(url)
        headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
        for attempt in (0, 1):
            conn, fresh = self._conn(host, port)
            try:
                conn.request("POST", path, body, headers)
                resp = conn.getresponse()
                return resp.status, resp.read()
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError) as e:
                conn.close()
                self._local.conn = None
                # A kept-alive connection the server closed while idle: retry once on a new one.
                if fresh or attempt:
                    raise ToolError("tool bridge connection failed: %s" % e) from None
            except OSError as e:
                conn.close()
                self._local.conn = None
                raise ToolError("tool bridge is unreachable at %s: %s" % (url, e)) from None
            except BaseException:
                conn.close()  # interrupted mid-request: the connection's state is unknown
                self._local.conn = None
                raise

    def _target(self, url):
        t = self.__dict__.get("_parsed")
        if t is None or t[0] != url:
            import urllib.parse

            u = urllib.parse.urlsplit(url)
            t = self._parsed = (url, u.hostname, u.port, u.path.rstrip("/") + "/v1/tool")
        return t[1:]

    def _conn(self, host, port):
        import http.client

        c = getattr(self._local, "conn", None)
        if c is not None and (c.host, c.port) == (host, port):
            return c, False
        if c is not None:
            c.close()
        c = http.client.HTTPConnection(host, port)
        self._local.conn = c
        return c, True


tool = _ToolBridge()
