#!/usr/bin/env bash
# `make bench`: evalhost (runner backend via the Go API and via `serve`, the
# latter from a Go and a Python client) and jupyter_client + ipykernel
# measured side by side in one run on this machine, every round trip beside
# the pipe+JSON floor (bench/cmd/evalbench/floor.py) and the relay floor
# (floor.py behind `evalbench relay-floor`, two hops) from the same client;
# writes bench/results.json and docs/benchmarks.md.
#   BENCH_RUNS       repetitions per figure (default 10; round trips 100x)
#   BENCH_FLOOD_MIB  MiB printed for the host-memory figure (default 1024)
#   PYTHON           interpreter for both sides (default python3)
set -euo pipefail
cd "$(dirname "$0")/.."
py=${PYTHON:-python3}
runs=${BENCH_RUNS:-10}
flood=${BENCH_FLOOD_MIB:-1024}
"$py" -c 'import jupyter_client, ipykernel' 2>/dev/null ||
  "$py" -m pip install --quiet --disable-pip-version-check jupyter_client ipykernel
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out/evalhost" ./cmd/evalhost
go build -o "$out/evalbench" ./bench/cmd/evalbench
load=$(cut -d' ' -f1-3 /proc/loadavg)
"$out/evalbench" -python "$py" -evalhost "$out/evalhost" -gateway -runs "$runs" -flood-mib "$flood" -out "$out/evalhost.json"
"$py" bench/serve_py.py --evalhost "$out/evalhost" --relay "$out/evalbench" --python "$py" --runs "$runs" --out "$out/serve_py.json"
"$py" bench/jupyter_bench.py --runs "$runs" --out "$out/jupyter.json"
"$py" bench/report.py --evalhost "$out/evalhost.json" --jupyter "$out/jupyter.json" --serve-py "$out/serve_py.json" \
  --load "$load" --commit "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" \
  --json bench/results.json --md docs/benchmarks.md
echo "wrote bench/results.json and docs/benchmarks.md"
