# Proves the wire contract from Python with nothing but urllib.request.
import json
import os
import urllib.error
import urllib.request


def post(body, token=None, url=None):
    req = urllib.request.Request(
        (url or os.environ["PI_TOOL_BRIDGE_URL"]) + "/v1/tool",
        data=json.dumps(body).encode(),
        headers={"Authorization": "Bearer " + (token or os.environ["PI_TOOL_BRIDGE_TOKEN"]),
                 "Content-Type": "application/json"},
        method="POST")
    try:
        with urllib.request.urlopen(req) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


call = {"session": os.environ["PI_TOOL_BRIDGE_SESSION"], "run": os.environ["EVALHOST_RUN"],
        "name": "echo", "args": {"path": "x.txt", "n": [1, 2.5, None], "s": "h\u00e9llo \u2603"}}
out = {
    "ok": post(call),
    "tool_error": post(dict(call, args={"fail": "no such file: x.txt"})),
    "wrong_token": post(call, token="0" * 64),
    "stale_run": post(dict(call, run="gone")),
}
print(json.dumps(out, sort_keys=True))
