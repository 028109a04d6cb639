# Bridge round trips from Python, interleaved with the same request to a bare
# net/http anchor; prints the per-call latencies in ns as JSON.
import http.client
import json
import os
import sys
import time
import urllib.parse

exec(open(sys.argv[1]).read())
n = int(sys.argv[2])
anchor = urllib.parse.urlsplit(sys.argv[3])
conn = http.client.HTTPConnection(anchor.hostname, anchor.port)
body = json.dumps({"session": os.environ["PI_TOOL_BRIDGE_SESSION"], "run": os.environ["EVALHOST_RUN"],
                   "name": "echo", "args": {"i": 1}}).encode()
headers = {"Authorization": "Bearer x", "Content-Type": "application/json"}
helper, bare = [], []
tool.echo(i=0)  # open the keep-alive connection outside the timing
conn.request("POST", "/v1/tool", body, headers)
conn.getresponse().read()
for i in range(n):
    t0 = time.perf_counter_ns()
    tool.echo(i=1)
    t1 = time.perf_counter_ns()
    conn.request("POST", "/v1/tool", body, headers)
    json.loads(conn.getresponse().read())
    t2 = time.perf_counter_ns()
    helper.append(t1 - t0)
    bare.append(t2 - t1)
print(json.dumps({"helper": helper, "bare": bare}))
