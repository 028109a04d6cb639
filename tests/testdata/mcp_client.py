"""Drive `evalhost mcp` over stdio with the Python `mcp` package's client.

Usage: python3 mcp_client.py EVALHOST_BINARY WORKDIR

A client nobody on evalhost wrote: if the server drifts from the protocol as
other SDKs read it, this fails. Each check prints "ok NAME"; the first failed
check raises, and the exit status is non-zero.
"""

import base64
import io
import json
import os
import re
import struct
import sys

import anyio
from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client

BINARY, WORKDIR = sys.argv[1], sys.argv[2]
MAX_SIDE, MAX_BYTES = 1568, 512 << 10


def g(obj, name):
    """An attribute by its mcp 2.x snake_case name, or its 1.x camelCase one."""
    if hasattr(obj, name):
        return getattr(obj, name)
    camel = re.sub(r"_([a-z])", lambda m: m.group(1).upper(), name)
    return getattr(obj, camel)


def texts(res):
    return "\n".join(c.text for c in res.content if isinstance(c, types.TextContent))


def check(cond, what, res=None):
    if not cond:
        detail = texts(res) if res is not None else ""
        raise AssertionError("%s\n%s" % (what, detail[:4000]))


def png_size(data):
    check(data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG")
    return struct.unpack(">II", data[16:24])


def image_size(data):
    if data[:8] == b"\x89PNG\r\n\x1a\n":
        return png_size(data)
    i = 2  # JPEG: find a start-of-frame marker
    while i < len(data):
        marker, length = data[i + 1], struct.unpack(">H", data[i + 2:i + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2):
            h, w = struct.unpack(">HH", data[i + 5:i + 9])
            return w, h
        i += 2 + length
    raise AssertionError("no JPEG frame header")


async def call(s, name, args, **kw):
    return await s.call_tool(name, args, **kw)


async def eval_(s, session, *cells):
    res = await call(s, "eval", {"session": session, "cells": list(cells)})
    return res, g(res, "structured_content")


def py(code, **kw):
    return dict(code=code, language="py", **kw)


async def tools_list(s):
    listed = await s.list_tools()
    names = sorted(t.name for t in listed.tools)
    want = ["close", "eval", "job", "jobs", "notebook_apply", "notebook_delete", "notebook_edit",
            "notebook_insert", "notebook_run", "notebook_view", "reset", "sessions", "stop", "wait"]
    check(names == want, "tools %s, want %s" % (names, want))
    ev = next(t for t in listed.tools if t.name == "eval")
    cell = g(ev, "input_schema")["properties"]["cells"]["items"]
    check(cell["required"] == ["code"], "eval cell schema %s" % cell)
    check(g(ev, "output_schema") and "cells" in g(ev, "output_schema")["properties"], "eval has no output schema")


async def two_cells(s):
    res, out = await eval_(s, "state", py("x = 41"), py("print(x + 1)"))
    check(not g(res, "is_error") and out["status"] == "ok" and "42" in texts(res), "two cells", res)
    check(out["cells"][1]["executionCount"] > out["cells"][0]["executionCount"], "execution counts", res)


async def cancel(s):
    await eval_(s, "cancel", py("kept = 7"))
    running = anyio.Event()

    async def progress(progress, total, message):
        if message and "sleeping" in message:
            running.set()

    async with anyio.create_task_group() as tg:
        async def long_call():
            await call(s, "eval", {"session": "cancel", "cells": [
                py("import time\nprint('sleeping', flush=True)\ntime.sleep(120)")]},
                progress_callback=progress)
        tg.start_soon(long_call)
        with anyio.fail_after(60):
            await running.wait()
        tg.cancel_scope.cancel()
    res, out = await eval_(s, "cancel", py("print(kept)"))
    check(not g(res, "is_error") and not out["cells"][0]["stateLost"] and "7" in texts(res), "state after cancel", res)


async def timeout(s):
    res, out = await eval_(s, "timeout", py("import time\nprint('partial', flush=True)\ntime.sleep(60)", timeout=1))
    t = texts(res)
    check(g(res, "is_error") and out["status"] == "timeout" and "partial" in t
          and "Command timed out after 1 seconds" in t, "timeout", res)


async def death(s):
    marker = os.path.join(WORKDIR, "died")
    code = ("import os\nif not os.path.exists(%r):\n    open(%r, 'w').close()\n    os._exit(9)\n"
            "print('second life')" % (marker, marker))
    res, out = await eval_(s, "death", py("y = 1"), py(code))
    c = out["cells"][1]
    check(not g(res, "is_error") and c["status"] == "ok" and c["retried"] and c["stateLost"]
          and "second life" in texts(res), "death", res)


async def plot(s):
    code = ("import matplotlib.pyplot as plt\nplt.figure(figsize=(30, 20), dpi=100)\n"
            "plt.plot([1, 3, 2])\nplt.show()")
    res, out = await eval_(s, "plot", py(code))
    images = [c for c in res.content if isinstance(c, types.ImageContent)]
    links = [c for c in res.content if isinstance(c, types.ResourceLink)]
    check(not g(res, "is_error") and len(images) == 1 and len(links) == 1, "one image and one link", res)
    check("iVBORw0KGgo" not in texts(res), "base64 in text", res)
    data = base64.b64decode(images[0].data)
    w, h = image_size(data)
    check(max(w, h) <= MAX_SIDE and len(data) <= MAX_BYTES, "image %dx%d %d bytes over budget" % (w, h, len(data)))
    full = await s.read_resource(str(links[0].uri))
    fw, fh = png_size(base64.b64decode(full.contents[0].blob))
    check(max(fw, fh) > MAX_SIDE and ("downscaled from %dx%d" % (fw, fh)) in texts(res), "full image", res)


async def big_output(s):
    lines = 200_000
    code = "import sys\nfor i in range(%d):\n    sys.stdout.write('%%099d\\n' %% i)" % lines
    res, out = await eval_(s, "big", py(code))
    c = out["cells"][0]
    t = texts(res)
    check(not g(res, "is_error") and c["truncated"] and c["artifact"] and len(t) < 64 << 10, "bounded text", res)
    check(("%099d" % (lines - 1)) in t and c["artifact"] in t, "tail and pointer", res)
    parts, uri = [], c["artifact"]
    nxt = re.compile(r"\n\[part of \S+: bytes \d+-\d+ of \d+; the rest: (\S+)\]\n$")
    while uri:
        check(len(parts) < 10, "too many parts")
        text = (await s.read_resource(uri)).contents[0].text
        m = nxt.search(text)
        uri = m.group(1) if m else None
        parts.append(text[:m.start()] if m else text)
    whole = "".join(parts)
    check(len(whole) == lines * 100 and whole.endswith("%099d\n" % (lines - 1)), "artifact holds %d bytes" % len(whole))


async def notebook(s):
    path = os.path.join(WORKDIR, "nb.ipynb")
    res = await call(s, "notebook_apply", {"path": path, "text": "# %%\nx = 1\n\n# %%\nprint(x)\n"})
    check(not g(res, "is_error"), "apply", res)
    res = await call(s, "notebook_edit", {"path": path, "cell": 0, "source": "x = 6 * 7"})
    check(not g(res, "is_error") and g(res, "structured_content")["cellSource"] == "x = 6 * 7", "edit", res)
    res = await call(s, "notebook_run", {"path": path})
    check(not g(res, "is_error") and g(res, "structured_content")["status"] == "ok", "run", res)
    with open(path) as f:
        nb = json.load(f)
    check(nb["cells"][1]["outputs"][0]["text"] == ["42\n"], "outputs %s" % nb["cells"][1]["outputs"])


async def malformed(s):
    for args, want in [({"cells": "print(1)"}, "cells must be an array"),
                       ({"cells": [{"code": "1", "language": "ruby"}]}, "cells[0].language"),
                       ({"cells": [{"code": "1", "language": ""}]}, 'cells[0].language is ""; use "py" (or python'),
                       ({"cells": [{"code": "1"}], "sesion": "x"}, '"sesion"')]:
        res = await call(s, "eval", args)
        check(g(res, "is_error") and want in texts(res), "malformed %s" % args, res)
    res, _ = await eval_(s, "after", py("print('still serving')"))
    check(not g(res, "is_error") and "still serving" in texts(res), "after errors", res)


async def main():
    params = StdioServerParameters(command=BINARY, args=["mcp", "--max-sessions", "16"],
                                   env={"EVALHOST_HOME": os.environ["EVALHOST_HOME"]})
    async with stdio_client(params) as streams:
        async with ClientSession(*streams) as s:
            init = await s.initialize()
            check(g(init, "server_info").name == "evalhost", "server %s" % g(init, "server_info"))
            print("ok initialize", flush=True)
            for name, fn in [("tools/list", tools_list), ("two cells", two_cells), ("cancel", cancel),
                             ("timeout", timeout), ("death", death), ("plot", plot), ("20 MB", big_output),
                             ("notebook", notebook), ("malformed", malformed)]:
                await fn(s)
                print("ok", name, flush=True)


anyio.run(main)
