#!/usr/bin/env python3
"""An agent's side of `evalhost serve`, stdlib only.

    python3 examples/agent_client.py [path/to/evalhost]

Starts the server, runs two cells in one session, cancels a slow request
(the session's state survives), shows a bad request being refused, lets a
long cell detach at its timeout and waits for the job, and shuts down. Run it from the repository after `make example` built bin/evalhost. See
docs/serve-protocol.md for every request and reply.
"""
import json
import subprocess
import sys
import threading


def ends_eval(msg):
    """A request_error ends the eval with its id only when it refused that
    eval: not a late cancel's refusal (op "cancel"), nor a duplicate id's
    while the first request with it goes on (inFlight)."""
    return (msg["type"] == "request_error" and msg.get("op", "eval") == "eval"
            and not msg.get("inFlight"))


class EvalHost:
    def __init__(self, binary="bin/evalhost"):
        self.proc = subprocess.Popen([binary, "serve"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, bufsize=1)
        self.replies = {}  # request id -> list of reply lines
        self.ended = {}    # request id -> threading.Event
        self.answered = {} # id of a job/wait/stop request -> threading.Event
        self.lock = threading.Lock()
        hello = json.loads(self.proc.stdout.readline())
        assert hello["type"] == "hello", hello
        self.protocol = hello["protocol"]
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            msg = json.loads(line)
            rid = msg.get("id", "")
            with self.lock:
                self.replies.setdefault(rid, []).append(msg)
                done = self.ended.get(rid)
                answered = self.answered.get(rid)
            if done and (msg["type"] == "end" or ends_eval(msg)):
                done.set()
            if answered:
                answered.set()
            if msg["type"] == "job_end":
                print(f"  … job {msg['job']} ended: {msg['status']}")
            if msg["type"] == "progress":
                print(f"  … request {rid} cell {msg['cell']} still running ({msg['elapsedMs']} ms)")

    def send(self, **request):
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()

    def eval(self, rid, cells, wait=True, **fields):
        with self.lock:
            self.ended[rid] = threading.Event()
        self.send(op="eval", id=rid, cells=cells, **fields)
        if wait:
            return self.wait(rid)

    def wait(self, rid, timeout=60):
        self.ended[rid].wait(timeout)
        with self.lock:
            return self.replies.get(rid, [])

    def ask(self, op, rid, timeout=60, **fields):
        """Sends a job, wait or stop request and returns its one reply."""
        with self.lock:
            self.answered[rid] = threading.Event()
        self.send(op=op, id=rid, **fields)
        self.answered[rid].wait(timeout)
        with self.lock:
            return self.replies.get(rid, [])

    def close(self):
        self.send(op="shutdown")
        self.proc.stdin.close()
        return self.proc.wait(timeout=30)


def show(replies):
    for msg in replies:
        kind = msg["type"]
        if kind == "stdout":
            print("  stdout:", msg["data"].rstrip())
        elif kind == "result":
            print("  result:", msg["bundle"].get("text/plain"))
        elif kind == "error":
            print("  error:", msg["ename"], msg["evalue"])
        elif kind == "cell_end":
            print(f"  cell {msg['cell']}: {msg['status']} in {msg['durationMs']} ms"
                  + (" (state lost)" if msg["stateLost"] else "")
                  + (f", runs on as {msg['job']}" if msg.get("job") else ""))
        elif kind == "job":
            print(f"  job {msg['job']}: {msg['state']}, {msg['status']}, {msg['outputBytes']} bytes of output")
        elif kind == "end":
            print(f"  request: {msg['status']}")
        elif kind == "request_error":
            print("  refused:", msg["error"])


def main():
    host = EvalHost(sys.argv[1] if len(sys.argv) > 1 else "bin/evalhost")
    print(f"connected (protocol {host.protocol})")

    print("two cells, one session:")
    show(host.eval("r1", [{"language": "py", "code": "x = 41\nprint('hello')"},
                          {"language": "py", "code": "x + 1"}], session="demo"))

    print("a slow cell, cancelled:")
    host.eval("r2", [{"code": "import time; time.sleep(30)"}], wait=False, session="demo")
    host.send(op="cancel", id="r2")
    show(host.wait("r2"))

    print("state survives the cancel:")
    show(host.eval("r3", [{"code": "x"}], session="demo"))

    print("a malformed request:")
    host.eval("r4", [{"language": "ruby", "code": "puts 1"}])
    show(host.replies.get("r4", []))

    print("a long cell detaches at its timeout and runs on as a job:")
    replies = host.eval("r5", [{"code": "import time\nfor i in range(8):\n    print('step', i, flush=True)\n    time.sleep(0.25)",
                                "timeout": 1, "onTimeout": "detach"}], session="long")
    show(replies)
    job = next(m["job"] for m in replies if m["type"] == "cell_end")
    show(host.ask("wait", "w5", job=job))

    print("server exited with", host.close())


if __name__ == "__main__":
    main()
