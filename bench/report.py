"""Combine evalbench's and jupyter_bench's figures into bench/results.json
and the table in docs/benchmarks.md (figures, ratios, machine, versions)."""
import argparse
import json
import os
import platform
import subprocess
import time


def machine(load):
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = 0
    try:
        with open("/proc/meminfo") as f:
            mem = int(f.readline().split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "memMB": mem, "kernel": platform.release(),
            "loadAvgAtStart": load}


def go_version():
    try:
        return subprocess.run(["go", "env", "GOVERSION"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown"


def fmt(v, unit):
    if v is None:
        return "—"
    if unit == "ms" and v < 1:
        return f"{v:.3f} ms"
    if unit == "ms":
        return f"{v:.1f} ms"
    if unit in ("MB/s", "cells/s"):
        return f"{v:.0f} {unit}"
    return f"{v:.1f} {unit}"


def ratio(a, b):
    if a is None or b in (None, 0):
        return None
    return a / b


def rx(r):
    return "—" if r is None else f"{r:.2f}×"


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--evalhost", required=True)
    ap.add_argument("--jupyter", required=True)
    ap.add_argument("--serve-py", help="bench/serve_py.py's figures")
    ap.add_argument("--load", default="")
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--json", required=True)
    ap.add_argument("--md", required=True)
    return ap.parse_args()


def load_figures(a):
    """evalbench's and jupyter_bench's output; serve_py's figures join evalbench's."""
    with open(a.evalhost) as f:
        ev = json.load(f)
    with open(a.jupyter) as f:
        jp = json.load(f)
    E = ev["figures"]
    if a.serve_py:
        with open(a.serve_py) as f:
            E.update(json.load(f)["figures"])
    return ev, jp


def figure_table(g, J, ratios):
    """The main table's rows: each figure for every backend, and evalhost vs Jupyter."""
    # (figure, unit, api key, serve key, jupyter key, better, target, note)
    rows = [
        ("cold start to first result (`1+1`, fresh interpreter)", "ms", "cold_start_ms", "cold_start_ms", "cold_start_ms", "lower", "≤ 1.3× `python -c pass`"),
        ("warm `1+1` round trip p50", "ms", "rtt_p50_ms", "rtt_p50_ms", "rtt_p50_ms", "lower", "≤ 0.25 ms"),
        ("… pipe+JSON floor p50 (same client, interleaved)", "ms", "rtt_floor_p50_ms", "rtt_floor_p50_ms", "rtt_floor_p50_ms", "", ""),
        ("… pipe+JSON relay floor p50 (two hops: client ↔ relay ↔ floor loop)", "ms", "rtt_relay_floor_p50_ms", "rtt_relay_floor_p50_ms", "rtt_relay_floor_p50_ms", "", ""),
        ("warm `1+1` round trip p90", "ms", "rtt_p90_ms", "rtt_p90_ms", "rtt_p90_ms", "lower", ""),
        ("… pipe+JSON floor p90 (same client, interleaved)", "ms", "rtt_floor_p90_ms", "rtt_floor_p90_ms", "rtt_floor_p90_ms", "", ""),
        ("… pipe+JSON relay floor p90 (two hops: client ↔ relay ↔ floor loop)", "ms", "rtt_relay_floor_p90_ms", "rtt_relay_floor_p90_ms", "rtt_relay_floor_p90_ms", "", ""),
        ("printed output, 20 MiB in 64 KiB writes", "MB/s", "throughput_mb_s", "throughput_mb_s", "throughput_mb_s", "higher", "≥ 3× ipykernel"),
        ("`for i in range(300000): print(i)`", "ms", "print_loop_ms", "print_loop_ms", "print_loop_ms", "lower", "≤ 1.3× the loop to /dev/null"),
        ("interrupt of `time.sleep(100)` to done", "ms", "interrupt_ms", "interrupt_ms", "interrupt_ms", "lower", "≤ 20 ms"),
        ("killed interpreter noticed", "ms", "death_noticed_ms", "death_noticed_ms", "death_noticed_ms", "lower", "≤ 50 ms"),
        ("16 sessions × 200 cells", "cells/s", "multi_cells_per_s", "multi_cells_per_s", "multi_cells_per_s", "higher", ""),
        ("… host RSS after them", "MB", "multi_host_rss_mb", "multi_host_rss_mb", "multi_host_rss_mb", "lower", ""),
        ("… RSS per interpreter", "MB", "multi_interpreter_rss_mb", "multi_interpreter_rss_mb", "multi_interpreter_rss_mb", "lower", ""),
    ]
    table = []
    for name, unit, ak, sk, jk, better, target in rows:
        av, sv, gv, jv = g("api_" + ak), g("serve_" + sk), g("gw_" + ak), J.get(jk)
        r = ratio(jv, av) if better == "lower" else ratio(av, jv) if better else None
        ratios[ak] = r
        table.append(f"| {name} | {fmt(av, unit)} | {fmt(sv, unit)} | {fmt(gv, unit)} | {fmt(jv, unit)} | {rx(r)} | {target} |")
    return table


def anchor_table(g, J, ratios):
    """The anchors table's rows: each backend against the same interpreter without evalhost."""
    anchors = [
        ("cold start vs `python -c pass` (same binary)", ratio(g("api_cold_start_ms"), g("api_python_c_pass_ms")),
         ratio(g("serve_cold_start_ms"), g("serve_python_c_pass_ms")), ratio(g("gw_cold_start_ms"), g("gw_python_c_pass_ms")),
         ratio(J.get("cold_start_ms"), g("api_python_c_pass_ms")), "≤ 1.3×"),
        ("print loop vs the loop to /dev/null", ratio(g("api_print_loop_ms"), g("api_print_loop_devnull_ms")),
         ratio(g("serve_print_loop_ms"), g("serve_print_loop_devnull_ms")), ratio(g("gw_print_loop_ms"), g("gw_print_loop_devnull_ms")),
         ratio(J.get("print_loop_ms"), g("api_print_loop_devnull_ms")), "≤ 1.3× (ipykernel 2×)"),
    ]
    for pct, target in (("p50", "≤ 2×"), ("p90", "≤ 2.5×")):
        rt, fl = "rtt_%s_ms" % pct, "rtt_floor_%s_ms" % pct
        anchors.append(("warm round trip %s vs the pipe+JSON floor (same client)" % pct, ratio(g("api_" + rt), g("api_" + fl)),
                        ratio(g("serve_" + rt), g("serve_" + fl)), ratio(g("gw_" + rt), g("gw_" + fl)),
                        ratio(J.get(rt), J.get(fl)), target))
        anchors.append(("… serve from a Python client, %s vs its floor" % pct, None,
                        ratio(g("serve_py_" + rt), g("serve_py_" + fl)), None, None, target))
        # serve is a relay (client ↔ serve ↔ runner): against the relay
        # floor, what is left is serve's own cost. No target is set on it.
        rl = "rtt_relay_floor_%s_ms" % pct
        anchors.append(("… serve %s vs the pipe+JSON relay floor (two hops, same client)" % pct, None,
                        ratio(g("serve_" + rt), g("serve_" + rl)), None, None, ""))
        anchors.append(("… serve from a Python client, %s vs its relay floor" % pct, None,
                        ratio(g("serve_py_" + rt), g("serve_py_" + rl)), None, None, ""))
    rows = []
    for name, ar, sr, gr, jr, target in anchors:
        ratios["anchor: " + name] = {"api": ar, "serve": sr, "gateway": gr, "jupyter": jr}
        rows.append(f"| {name} | {rx(ar)} | {rx(sr)} | {rx(gr)} | {rx(jr)} | {target} |")

    return rows


def errors_note(errs):
    """The figures evalbench could not take, one line each."""
    if not errs:
        return ""
    return "\nNot measured (each figure checks its output, so a backend that drops output fails it):\n\n" + "".join(
        f"- {k}: `{line[:300]}`\n" for k, v in sorted(errs.items()) for line in v.splitlines())


def render_tables(ev, g, table, anchor_rows):
    """docs/benchmarks.md up to the flood table."""
    return f"""# Benchmarks

Written by `make bench` (`bench/run.sh`) on {time.strftime('%Y-%m-%d %H:%M %Z')}; do not edit by hand.
evalhost's runner backend is measured through the Go API (package `sessions`, in
process) and through `evalhost serve` (NDJSON over a pipe), jupyter_client +
ipykernel through `KernelManager`/`BlockingKernelClient`, all in one run on the
same interpreter. Each figure is the median of {ev.get('runs')} runs (round trips: {100 * ev.get('runs', 0)} cells).
"×" is how many times better evalhost (Go API) is than Jupyter on that row.

| figure | evalhost (Go API) | evalhost (serve) | evalhost gateway backend (Go API) | jupyter_client + ipykernel | evalhost vs Jupyter | target |
|---|---|---|---|---|---|---|
{chr(10).join(table)}

Against the anchors (the same resolved interpreter binary, no evalhost), measured
interleaved with each evalhost run:

| ratio | Go API | serve | gateway backend | Jupyter | target |
|---|---|---|---|---|---|
{chr(10).join(anchor_rows)}

The pipe+JSON floor is a 10-line Python loop (`bench/cmd/evalbench/floor.py`) that reads a
JSON request line, evaluates it and writes a JSON reply: the least a warm round trip over
a pipe costs with this interpreter. Each round trip above is followed by one of the floor,
from the same client (Go for the Go API and serve, Python for Jupyter). `serve` is a relay
(client ↔ serve ↔ runner, two pipe round trips), so each round trip is also followed by one
of the relay floor: the same floor loop behind `evalbench relay-floor`, a one-goroutine Go
loop that copies each request line to the loop and its reply line back with blocking reads
and writes (`bench/cmd/evalbench/relay.go`). Against it, what remains is serve's own work.
`serve` from a Python client (`bench/serve_py.py`): p50 {fmt(g('serve_py_rtt_p50_ms'), 'ms')} (floor
{fmt(g('serve_py_rtt_floor_p50_ms'), 'ms')}, relay floor {fmt(g('serve_py_rtt_relay_floor_p50_ms'), 'ms')}),
p90 {fmt(g('serve_py_rtt_p90_ms'), 'ms')} (floor {fmt(g('serve_py_rtt_floor_p90_ms'), 'ms')}, relay floor
{fmt(g('serve_py_rtt_relay_floor_p90_ms'), 'ms')}); CPU time per round trip: evalhost's (serve and its
interpreter) {fmt(g('serve_py_cpu_us_per_rtt'), 'µs')}, the floor loop's {fmt(g('serve_py_floor_cpu_us_per_rtt'), 'µs')},
the relay floor's (relay and loop) {fmt(g('serve_py_relay_floor_cpu_us_per_rtt'), 'µs')} (read from /proc in
clock ticks: ±10 µs at the default 1,000 round trips).

Anchors: `python -c pass` {fmt(g('api_python_c_pass_ms'), 'ms')}; the print loop to /dev/null
{fmt(g('api_print_loop_devnull_ms'), 'ms')}. A print-loop ratio below 1 is real: the runner's
`sys.stdout` (a 64 KiB `BufferedWriter`, `newline="\\n"`) makes `print` itself about 3×
cheaper than Python's default stdout, which the anchor uses.

"""


def render_details(g, flood, errors, mach, versions):
    """docs/benchmarks.md from the flood table on: how figures are taken, machine, versions."""
    return f"""Printing {flood} MiB (64 KiB lines; the cell's output spills to an artifact):

| | Go API | serve | gateway backend |
|---|---|---|---|
| rate | {fmt(g('api_flood_mb_s'), 'MB/s')} | {fmt(g('serve_flood_mb_s'), 'MB/s')} | {fmt(g('gw_flood_mb_s'), 'MB/s')} |
| host resident peak (VmHWM) | {fmt(g('api_flood_host_peak_rss_mb'), 'MB')} | {fmt(g('serve_flood_host_peak_rss_mb'), 'MB')} | {fmt(g('gw_flood_host_peak_rss_mb'), 'MB')} |
| host resident before | {fmt(g('api_flood_host_rss_before_mb'), 'MB')} | {fmt(g('serve_flood_host_rss_before_mb'), 'MB')} | {fmt(g('gw_flood_host_rss_before_mb'), 'MB')} |
| host Go heap growth | {fmt(g('api_flood_host_heap_growth_mb'), 'MB')} | — | {fmt(g('gw_flood_host_heap_growth_mb'), 'MB')} |
{errors}

How each figure is taken: cold start is a `per-call` request (Jupyter: a new
KernelManager) from sending to the `1+1` result; interrupt is from the cancel, sent
20 ms after the `started` frame (Jupyter: `busy`) with the cell blocked in its sleep,
to the cell's end (`idle`); a killed interpreter is
timed from a timestamp the cell records just before `os.kill(os.getpid(), 9)`
to the host's death notice (Jupyter: `KernelManager.is_alive()` polled every
millisecond; its own restarter polls every 3 s); host RSS is the evalhost
process (Go API: the benchmark process itself) or the jupyter_client process.

Machine: {mach['cpu']}, {mach['cores']} cores, {mach['memMB']} MB, Linux {mach['kernel']},
load average at start {mach['loadAvgAtStart'] or 'unknown'} (shared machine: figures are noisy, ratios
are taken within one run). Versions: evalhost {versions['evalhost']}, {versions['go']},
Python {versions['python']}, jupyter_client {versions['jupyter_client']}, ipykernel {versions['ipykernel']}.
"""



def main():
    a = parse_args()
    ev, jp = load_figures(a)
    E, J = ev["figures"], jp["figures"]
    g = lambda k: E.get(k)  # noqa: E731
    ratios = {}
    table = figure_table(g, J, ratios)
    anchor_rows = anchor_table(g, J, ratios)
    flood = ev.get("floodMiB")
    errs = ev.get("errors") or {}
    mach = machine(a.load)
    versions = {"evalhost": a.commit, "go": go_version(), "python": jp.get("pythonVersion"),
                "jupyter_client": jp.get("jupyter_client"), "ipykernel": jp.get("ipykernel")}
    md = render_tables(ev, g, table, anchor_rows) + render_details(g, flood, errors_note(errs), mach, versions)
    os.makedirs(os.path.dirname(a.md) or ".", exist_ok=True)
    with open(a.md, "w") as f:
        f.write(md)
    with open(a.json, "w") as f:
        json.dump({"machine": mach, "versions": versions, "runs": ev.get("runs"), "floodMiB": flood,
                   "evalhost": E, "jupyter": J, "errors": errs, "ratios": ratios}, f, indent=2)
        f.write("\n")

if __name__ == "__main__":
    main()
