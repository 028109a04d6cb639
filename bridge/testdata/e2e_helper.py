# Drives the runner prelude's tool helper against the real bridge.
import asyncio
import json
import os
import sys
import threading

exec(open(sys.argv[1]).read())
out = {}

out["attr"] = tool.echo(x=1)
out["call"] = tool("echo", name="n", y=[True])

try:
    tool.echo(fail="no such file: x.txt")
except ToolError as e:
    out["tool_error"] = str(e)

results = [None] * 20


def worker(i):
    results[i] = tool.echo(i=i)["args"]["i"]


threads = [threading.Thread(target=worker, args=(i,)) for i in range(20)]
for t in threads:
    t.start()
for t in threads:
    t.join()
out["threads"] = results


async def main():
    return await asyncio.gather(*(asyncio.to_thread(tool.echo, a=i) for i in range(3)))


out["asyncio"] = [r["args"]["a"] for r in asyncio.run(main())]

run = os.environ.pop("EVALHOST_RUN")
os.environ["EVALHOST_RUN"] = "stale"
try:
    tool.echo()
except ToolError as e:
    out["stale"] = str(e)
os.environ["EVALHOST_RUN"] = run

del os.environ["PI_TOOL_BRIDGE_TOKEN"]
try:
    tool.echo()
except ToolError as e:
    out["unavailable"] = str(e)

try:
    tool._private
except AttributeError:
    out["private"] = "AttributeError"

print(json.dumps(out, sort_keys=True))
