"""Measure jupyter_client + ipykernel on the figures evalbench measures.

Run by bench/run.sh: python3 bench/jupyter_bench.py --runs N --out FILE.
Each figure is a median of repeated runs; the workloads are evalbench's
(see bench/cmd/evalbench/anchors.go), driven through KernelManager and
BlockingKernelClient the way a Jupyter-based eval tool drives them.
"""
import argparse
import json
import os
import queue
import signal
import statistics
import subprocess
import tempfile
import sys
import threading
import time

import ipykernel
import jupyter_client
from jupyter_client import KernelManager

PRINT_LOOP = "for i in range(300000): print(i)"
BULK = "import sys\nb = 'x' * 65535 + '\\n'\nw = sys.stdout.write\nfor _ in range({n}):\n    w(b)\nsys.stdout.flush()"
# ipykernel forwards fd 1 asynchronously, so a stamp printed just before the
# kill may never arrive: the Jupyter death cell writes it to a file instead.
DEATH = "import os, time\nopen({path!r}, 'w').write(str(time.time_ns()))\nos.kill(os.getpid(), 9)"


def log(msg):
    print(time.strftime("%H:%M:%S"), "jupyter_bench:", msg, file=sys.stderr, flush=True)


class Kernel:
    """One ipykernel with a blocking client on its channels."""

    def __init__(self):
        self.km = KernelManager(kernel_name="python3")
        self.km.kernel_cmd = None
        # Its stderr only carries a warning about TCP without encryption.
        self.km.start_kernel(extra_arguments=["--HistoryManager.enabled=False"], stderr=subprocess.DEVNULL)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=120)

    def execute(self, code, on_output=None, timeout=600):
        """Run code; return (status, first result time) once the kernel is idle."""
        msg_id = self.kc.execute(code, store_history=False)
        result_at = None
        deadline = time.monotonic() + timeout
        while True:
            msg = self.kc.get_iopub_msg(timeout=max(deadline - time.monotonic(), 0.001))
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            t = msg["msg_type"]
            if t == "stream" and on_output:
                on_output(msg["content"]["text"])
            elif t == "execute_result" and result_at is None:
                result_at = time.perf_counter()
            elif t == "status" and msg["content"]["execution_state"] == "idle":
                break
        reply = self.kc.get_shell_msg(timeout=max(deadline - time.monotonic(), 0.001))
        return reply["content"]["status"], result_at

    def pid(self):
        return self.km.provisioner.process.pid

    def shutdown(self):
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)


def q(xs, p):
    xs = sorted(xs)
    return xs[min(int(p * len(xs)), len(xs) - 1)]


def rss_mb(pid, field="VmRSS"):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def cold_start(runs, out):
    ds = []
    for _ in range(runs):
        t0 = time.perf_counter()
        k = Kernel()
        _, at = k.execute("1+1")
        ds.append(at - t0)
        k.shutdown()
    out["cold_start_ms"] = statistics.median(ds) * 1e3


FLOOR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cmd", "evalbench", "floor.py")


def warm(k, runs, out):
    """Round trips, each followed by one of the pipe+JSON floor loop from
    the same client (as evalbench and serve_py.py do), then bulk output."""
    k.execute("0")
    floor = subprocess.Popen([sys.executable, FLOOR], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    ds, fs = [], []
    try:
        for i in range(runs * 100):
            t0 = time.perf_counter()
            k.execute("1+1")
            t1 = time.perf_counter()
            floor.stdin.write((json.dumps({"id": "f%d" % i, "code": "1+1"}) + "\n").encode())
            floor.stdin.flush()
            if json.loads(floor.stdout.readline()).get("status") != "ok":
                raise SystemExit("the floor loop failed")
            ds.append(t1 - t0)
            fs.append(time.perf_counter() - t1)
    finally:
        floor.stdin.close()
        floor.wait(10)
    out["rtt_p50_ms"] = q(ds, 0.5) * 1e3
    out["rtt_p90_ms"] = q(ds, 0.9) * 1e3
    out["rtt_floor_p50_ms"] = q(fs, 0.5) * 1e3
    out["rtt_floor_p90_ms"] = q(fs, 0.9) * 1e3

    blocks = 320
    rates = []
    for _ in range(runs):
        n = [0]
        t0 = time.perf_counter()
        k.execute(BULK.format(n=blocks), lambda s: n.__setitem__(0, n[0] + len(s)))
        el = time.perf_counter() - t0
        if n[0] != blocks << 16:
            raise SystemExit(f"streamed {n[0]} bytes, want {blocks << 16}")
        rates.append(n[0] / 1e6 / el)
    out["throughput_mb_s"] = statistics.median(rates)

    ds = []
    for _ in range(max(runs // 2, 3)):
        t0 = time.perf_counter()
        k.execute(PRINT_LOOP, lambda s: None)
        ds.append(time.perf_counter() - t0)
    out["print_loop_ms"] = statistics.median(ds) * 1e3


def interrupt(k, runs, out):
    """From interrupt_kernel(), 20 ms after busy (the cell blocked in its
    sleep, as evalbench measures), to idle. ipykernel ignores an
    interrupt that lands before the cell really started, so it is repeated
    every 0.5 s until the cell ends, as evalhost's gateway client does; the
    figure is still measured from the first one."""
    ds = []
    for _ in range(runs):
        msg_id = k.kc.execute("import time\ntime.sleep(100)", store_history=False)
        sent = None
        while True:
            try:
                msg = k.kc.get_iopub_msg(timeout=0.5)
            except queue.Empty:
                if sent is not None:
                    k.km.interrupt_kernel()
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            st = msg["content"].get("execution_state")
            if st == "busy" and sent is None:
                time.sleep(0.02)  # as evalbench: the cell blocked in its sleep
                sent = time.perf_counter()
                k.km.interrupt_kernel()
            elif st == "idle":
                break
        ds.append(time.perf_counter() - sent)
        while k.kc.get_shell_msg(timeout=60)["parent_header"].get("msg_id") != msg_id:
            pass
    out["interrupt_ms"] = statistics.median(ds) * 1e3


def death(runs, out):
    """From the cell's timestamp to KernelManager.is_alive() being False,
    polled every millisecond (Jupyter's own restarter polls every 3 s)."""
    ds = []
    path = os.path.join(tempfile.mkdtemp(prefix="jupyter-bench-"), "stamp")
    for _ in range(runs):
        k = Kernel()
        if os.path.exists(path):
            os.remove(path)
        k.kc.execute(DEATH.format(path=path), store_history=False)
        deadline = time.monotonic() + 60
        while k.km.is_alive():
            if time.monotonic() > deadline:
                raise SystemExit("kernel did not die")
            time.sleep(0.001)
        noticed = time.time_ns()
        with open(path) as f:
            ds.append(noticed - int(f.read()))
        k.kc.stop_channels()
        k.km.shutdown_kernel(now=True)
    out["death_noticed_ms"] = statistics.median(ds) / 1e6


def multi(out):
    """16 kernels, 200 cells each, one client thread per kernel."""
    n, cells = 16, 200
    kernels = [Kernel() for _ in range(n)]
    errors = queue.Queue()

    def work(k):
        try:
            for j in range(cells):
                st, _ = k.execute(f"x = {j}\nx")
                if st != "ok":
                    errors.put(st)
        except Exception as e:  # reported below
            errors.put(repr(e))

    threads = [threading.Thread(target=work, args=(k,)) for k in kernels]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    el = time.perf_counter() - t0
    if not errors.empty():
        raise SystemExit(f"multi: {errors.get()}")
    out["multi_cells_per_s"] = n * cells / el
    out["multi_host_rss_mb"] = rss_mb(os.getpid())
    out["multi_interpreter_rss_mb"] = statistics.median(rss_mb(k.pid()) for k in kernels)
    for k in kernels:
        k.shutdown()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--out", default="-")
    ap.add_argument("--skip-multi", action="store_true")
    args = ap.parse_args()
    out = {}
    log("cold start")
    cold_start(max(args.runs // 2, 3), out)
    k = Kernel()
    try:
        log("round trip, throughput, print loop")
        warm(k, args.runs, out)
        log("interrupt")
        interrupt(k, args.runs, out)
    finally:
        k.shutdown()
    log("death")
    death(max(args.runs // 2, 3), out)
    if not args.skip_multi:
        log("16 kernels x 200 cells")
        multi(out)
    res = {
        "python": sys.executable,
        "pythonVersion": "%d.%d.%d" % sys.version_info[:3],
        "jupyter_client": jupyter_client.__version__,
        "ipykernel": ipykernel.__version__,
        "runs": args.runs,
        "figures": out,
    }
    text = json.dumps(res, indent=2) + "\n"
    if args.out == "-":
        sys.stdout.write(text)
    else:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
