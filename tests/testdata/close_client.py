"""End `evalhost mcp` or `evalhost serve` over stdio as a client may, and
report how it exited.

Usage: python3 close_client.py EVALHOST_BINARY SERVER HOW RUNS WORKDIR

SERVER is mcp or serve. HOW is how the client ends, after one eval (for
mcp, after initialize too):
  in,out      it read every answer, then closes stdin, then stdout
  out,in      it read every answer, then closes stdout, then stdin
  out         it read every answer, then closes stdout; stdin stays open
              until the server has exited
  unanswered  its eval is running (the cell said so through a FIFO), and it
              closes stdin and stdout, as a client that dies does
  cancelled   (mcp) its eval is running, it sends notifications/cancelled
              for it, and once the cell was interrupted (a second FIFO)
              closes stdin and stdout without reading the answer
  sdk         (mcp) the Python mcp package's stdio_client and ClientSession,
              which end the server as that package does
  sent        it sends its eval and closes stdout and stdin at once,
              reading nothing
  sent,open   it sends its eval and closes stdout; stdin stays open until
              the server has exited
  own,out,in  it sends a line that is not JSON, waits until the server's
              own answer to it (serve's request_error, mcp's parse error)
              is in the pipe, and closes stdout, then stdin, unread
  own,in,out  the same, closing stdin, then stdout
  own,out     the same, closing stdout; stdin stays open until the server
              has exited

Each of RUNS runs prints one JSON line: {"code": exit status, "stderr": ...}.
"""

import json
import os
import select
import subprocess
import sys
import tempfile

BINARY, SERVER, HOW, RUNS, WORKDIR = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def request(code):
    if SERVER == "serve":
        return {"op": "eval", "id": "r1", "session": "s", "cells": [{"code": code}]}
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "eval", "arguments": {"cells": [{"code": code}]}}}


def read_answer(out):
    """Reads the eval's answer: serve's end line, mcp's response."""
    while True:
        line = out.readline()
        if not line:
            raise AssertionError("the output ended before the answer")
        msg = json.loads(line)
        if SERVER == "serve" and msg.get("type") in ("end", "request_error"):
            ok = msg.get("type") == "end" and msg.get("status") == "ok"
            break
        if SERVER == "mcp" and msg.get("id") == 1:
            ok = "result" in msg
            break
    if not ok:
        raise AssertionError("the eval's answer: %r" % msg)


def by_hand(run):
    """Drives the server over its pipes; returns (exit status, stderr)."""
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen([BINARY, SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)

        def send(msg):
            p.stdin.write((json.dumps(msg) + "\n").encode())
            p.stdin.flush()

        if SERVER == "mcp":
            send(INITIALIZE)
            p.stdout.readline()
            send(INITIALIZED)
        else:
            p.stdout.readline()  # hello
        if HOW == "unanswered":
            fifo = os.path.join(WORKDIR, "running%d" % run)
            os.mkfifo(fifo)
            send(request("with open(%r, 'w') as f: f.write('x')\nimport time\ntime.sleep(600)" % fifo))
            with open(fifo) as f:  # the cell runs
                f.read()
        elif HOW == "cancelled":
            fifo, stopped = os.path.join(WORKDIR, "running%d" % run), os.path.join(WORKDIR, "stopped%d" % run)
            os.mkfifo(fifo)
            os.mkfifo(stopped)
            # The running mark is written inside the try: the interrupt the
            # cancellation sends may land at once, and before it, the
            # finally that says so would not run.
            send(request("import time\ntry:\n    with open(%r, 'w') as f: f.write('x')\n    time.sleep(600)\n"
                         "finally:\n    with open(%r, 'w') as f: f.write('x')" % (fifo, stopped)))
            with open(fifo) as f:  # the cell runs
                f.read()
            send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1, "reason": "t"}})
            with open(stopped) as f:  # the cancellation was read: the cell was interrupted
                f.read()
        elif HOW.startswith("own"):
            p.stdin.write(b"not json\n")
            p.stdin.flush()
            # Its answer was written: the pipe holds it (nothing else is
            # owed: the first line was read, and initialized gets none).
            select.select([p.stdout], [], [])
        elif HOW.startswith("sent"):
            send(request("1+1"))
        else:
            send(request("1+1"))
            read_answer(p.stdout)
        ends = {"in,out": [p.stdin, p.stdout], "out,in": [p.stdout, p.stdin], "out": [p.stdout],
                "unanswered": [p.stdin, p.stdout], "cancelled": [p.stdin, p.stdout],
                "sent": [p.stdout, p.stdin], "sent,open": [p.stdout],
                "own,out,in": [p.stdout, p.stdin], "own,in,out": [p.stdin, p.stdout], "own,out": [p.stdout]}[HOW]
        for f in ends:
            f.close()
        code = p.wait()
        p.stdin.close()
        err.seek(0)
        return code, err.read().decode()


def with_sdk(run):
    """Ends the server as the mcp package's stdio_client does; the exit
    status and stderr are recorded by sh around the server."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    status, stderr = os.path.join(WORKDIR, "status%d" % run), os.path.join(WORKDIR, "stderr%d" % run)
    params = StdioServerParameters(command="sh", args=["-c", '"$0" mcp 2>"$2"; echo $? >"$1"', BINARY, status, stderr],
                                   env=dict(os.environ))

    async def session():
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                res = await s.call_tool("eval", {"cells": [{"code": "1+1"}]})
                if res.isError if hasattr(res, "isError") else res.is_error:
                    raise AssertionError("the call failed: %r" % res)

    anyio.run(session)
    with open(status) as f, open(stderr) as e:
        return int(f.read()), e.read()


for run in range(RUNS):
    code, stderr = (with_sdk if HOW == "sdk" else by_hand)(run)
    print(json.dumps({"code": code, "stderr": stderr}), flush=True)
