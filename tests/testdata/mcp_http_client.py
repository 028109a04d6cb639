"""Drive `evalhost mcp --http` with the Python `mcp` package's client.

Usage: python3 mcp_http_client.py URL TOKEN

Each check prints "ok NAME"; the first failed check raises, and the exit
status is non-zero. A call the server cannot read (too long) must fail
alone: the calls after it are served on the same session. (One nesting
deeper than the server reads, pydantic refuses to send: the Go client's
test sends it.)
"""

import sys

import anyio
import mcp
from mcp import ClientSession, types
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

URL, TOKEN = sys.argv[1], sys.argv[2]
MCPError = getattr(mcp, "MCPError", None) or mcp.McpError  # mcp 2.x, 1.x


def texts(res):
    return "\n".join(c.text for c in res.content if isinstance(c, types.TextContent))


def check(cond, what):
    if not cond:
        raise AssertionError(what)


async def served(s, code, want):
    res = await s.call_tool("eval", {"cells": [{"code": code}]})
    check(want in texts(res), "eval %r: %s" % (code, texts(res)[:2000]))


async def refused(s, args, want):
    try:
        res = await s.call_tool("eval", args)
    except MCPError as e:
        check(want in str(e), "error %r, want %r" % (str(e), want))
        return
    raise AssertionError("served: %s" % texts(res)[:2000])


async def main():
    http = create_mcp_http_client(headers={"Authorization": "Bearer " + TOKEN})
    async with http, streamable_http_client(URL, http_client=http) as streams:
        async with ClientSession(streams[0], streams[1]) as s:
            await s.initialize()
            print("ok initialize", flush=True)
            await served(s, "1+1", "2")
            print("ok eval", flush=True)
            await refused(s, {"cells": [{"code": "#" + "x" * (17 << 20)}]}, "longer than the server's limit")
            await served(s, "3+3", "6")
            print("ok too long", flush=True)


anyio.run(main)
