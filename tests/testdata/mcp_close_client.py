"""End `evalhost mcp` over stdio as a client may, and report how it exited.

Usage: python3 mcp_close_client.py EVALHOST_BINARY HOW RUNS WORKDIR

HOW is how the client ends (after initialize and one eval call):
  in,out      it read every answer, then closes stdin, then stdout
  out,in      it read every answer, then closes stdout, then stdin
  out         it read every answer, then closes stdout; stdin stays open
              until the server has exited
  unanswered  its call is running (the cell said so through a FIFO), and it
              closes stdin and stdout, as a client that dies does
  sdk         the Python mcp package's stdio_client and ClientSession, which
              end the server as that package does

Each of RUNS runs prints one JSON line: {"code": exit status, "stderr": ...}.
"""

import json
import os
import subprocess
import sys
import tempfile

BINARY, HOW, RUNS, WORKDIR = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call(code):
    return {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "eval", "arguments": {"cells": [{"code": code}]}}}


def by_hand(run):
    """Drives the server over its pipes; returns (exit status, stderr)."""
    with tempfile.TemporaryFile() as err:
        p = subprocess.Popen([BINARY, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)

        def send(msg):
            p.stdin.write((json.dumps(msg) + "\n").encode())
            p.stdin.flush()

        send(INITIALIZE)
        p.stdout.readline()
        send(INITIALIZED)
        if HOW == "unanswered":
            fifo = os.path.join(WORKDIR, "running%d" % run)
            os.mkfifo(fifo)
            send(call("with open(%r, 'w') as f: f.write('x')\nimport time\ntime.sleep(600)" % fifo))
            with open(fifo) as f:  # the cell runs
                f.read()
        else:
            send(call("1+1"))
            answer = json.loads(p.stdout.readline())
            if answer.get("id") != 1 or "result" not in answer:
                raise AssertionError("the call's answer: %r" % answer)
        ends = {"in,out": [p.stdin, p.stdout], "out,in": [p.stdout, p.stdin], "out": [p.stdout],
                "unanswered": [p.stdin, p.stdout]}[HOW]
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
