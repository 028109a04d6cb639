"""make bench: warm `1+1` round trips of `evalhost serve` from a Python
client, each followed by one of the pipe+JSON floor loop (floor.py beside
evalbench) and, with --relay, one of the relay floor (floor.py behind
`evalbench relay-floor`, two hops as serve is) from the same client, so all
see the same load. Also the CPU
time evalhost (serve and its interpreter) spends per round trip, which a
loaded machine disturbs less than latency. Writes JSON figures:
serve_py_rtt_p50_ms, serve_py_rtt_p90_ms, serve_py_rtt_floor_p50_ms,
serve_py_rtt_floor_p90_ms, serve_py_rtt_relay_floor_p50_ms,
serve_py_rtt_relay_floor_p90_ms (with --relay), serve_py_cpu_us_per_rtt, and
the same CPU figure of the floor loop and the relay floor (the relay and
its floor.py): serve_py_floor_cpu_us_per_rtt,
serve_py_relay_floor_cpu_us_per_rtt."""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

FLOOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cmd", "evalbench", "floor.py")


def q(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


def cpu_s(pid):
    """utime + stime of pid and its reaped children, in seconds."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def children(pid):
    """pid's children: each of its threads lists those it started."""
    out = []
    for task in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/children" % (pid, task)) as f:
            out += [int(c) for c in f.read().split()]
    return out


def tree_cpu_s(pid):
    """CPU of pid and of every process under it: serve's interpreter is
    its reaper's child, not serve's."""
    return cpu_s(pid) + sum(tree_cpu_s(c) for c in children(pid))


class Serve:
    def __init__(self, evalhost, python, home):
        env = dict(os.environ, EVALHOST_HOME=home)
        self.p = subprocess.Popen([evalhost, "serve", "--python", python, "--progress", "0"], env=env,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.r = self.p.stdout
        hello = json.loads(self.r.readline())
        assert hello["type"] == "hello", hello
        self.seq = 0

    def eval(self, code):
        self.seq += 1
        rid = "p%d" % self.seq
        req = {"op": "eval", "id": rid, "session": "warm", "cells": [{"language": "py", "code": code}]}
        self.p.stdin.write((json.dumps(req) + "\n").encode())
        self.p.stdin.flush()
        status = None
        while True:
            line = self.r.readline()
            if not line:
                raise SystemExit("serve ended")
            m = json.loads(line)
            if m.get("id") != rid:
                continue
            if m["type"] == "cell_end":
                status = m["status"]
            elif m["type"] == "end":
                if status != "ok":
                    raise SystemExit("cell %r ended %s: %s" % (code, status, m))
                return

    def close(self):
        self.p.stdin.write(b'{"op":"shutdown"}\n')
        self.p.stdin.flush()
        self.p.stdin.close()
        self.p.wait(30)


class Floor:
    """floor.py reached directly (argv None) or through the relay argv runs."""

    def __init__(self, python, argv=None):
        self.p = subprocess.Popen(argv or [python, FLOOR], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.seq = 0

    def eval(self, code):
        self.seq += 1
        self.p.stdin.write((json.dumps({"id": "f%d" % self.seq, "code": code}) + "\n").encode())
        self.p.stdin.flush()
        rep = json.loads(self.p.stdout.readline())
        if rep.get("status") != "ok" or rep.get("id") != "f%d" % self.seq:
            raise SystemExit("floor loop answered %r to f%d" % (rep, self.seq))

    def close(self):
        self.p.stdin.close()
        self.p.wait(10)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--evalhost", required=True)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--relay", help="evalbench binary, for the relay floor (evalbench relay-floor)")
    ap.add_argument("--out")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="evalbench-servepy-") as home:
        s, fl = Serve(a.evalhost, a.python, home), Floor(a.python)
        floors = [fl]
        if a.relay:
            floors.append(Floor(a.python, [a.relay, "relay-floor", "-python", a.python]))
        try:
            s.eval("0")
            for f in floors:
                f.eval("0")
            ds, fs = [], [[] for _ in floors]
            cpu0 = tree_cpu_s(s.p.pid)
            fcpu0 = [tree_cpu_s(f.p.pid) for f in floors]
            for _ in range(a.runs * 100):
                t0 = time.perf_counter()
                s.eval("1+1")
                ds.append(time.perf_counter() - t0)
                for f, xs in zip(floors, fs):
                    t1 = time.perf_counter()
                    f.eval("1+1")
                    xs.append(time.perf_counter() - t1)
            cpu = tree_cpu_s(s.p.pid) - cpu0
            fcpu = [tree_cpu_s(f.p.pid) - c for f, c in zip(floors, fcpu0)]
        finally:
            s.close()
            for f in floors:
                f.close()
    out = {"serve_py_rtt_p50_ms": q(ds, 0.5) * 1e3, "serve_py_rtt_p90_ms": q(ds, 0.9) * 1e3,
           "serve_py_rtt_floor_p50_ms": q(fs[0], 0.5) * 1e3, "serve_py_rtt_floor_p90_ms": q(fs[0], 0.9) * 1e3,
           "serve_py_cpu_us_per_rtt": cpu / len(ds) * 1e6,
           "serve_py_floor_cpu_us_per_rtt": fcpu[0] / len(ds) * 1e6}
    if a.relay:
        out["serve_py_rtt_relay_floor_p50_ms"] = q(fs[1], 0.5) * 1e3
        out["serve_py_rtt_relay_floor_p90_ms"] = q(fs[1], 0.9) * 1e3
        out["serve_py_relay_floor_cpu_us_per_rtt"] = fcpu[1] / len(ds) * 1e6
    text = json.dumps({"figures": out}, indent=2)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
