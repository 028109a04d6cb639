# The pipe+JSON floor (make bench): the least a warm round trip over a pipe
# costs in this Python. Reads a JSON request line, evaluates, writes a JSON reply.
import json
import sys

for line in sys.stdin:
    req = json.loads(line)
    try:
        rep = {"id": req["id"], "status": "ok", "result": repr(eval(req["code"]))}
    except Exception as e:
        rep = {"id": req["id"], "status": "error", "error": repr(e)}
    sys.stdout.write(json.dumps(rep) + "\n")
    sys.stdout.flush()
