// Command evalbench measures evalhost's runner backend, through the Go API
// (package sessions, in this process) and through `evalhost serve` (NDJSON
// over a pipe), on the figures DESIGN.md's performance targets name: cold
// start to first result, warm 1+1 round trip, printed-output throughput and
// the host's memory while printing 1 GB, interrupt to done, time to notice a
// killed interpreter, 16 sessions × 200 cells, and the anchors (`python -c
// pass` of the same resolved binary, a print loop to /dev/null). Each figure
// is a median of repeated runs. Warm round trips are interleaved with two
// floors from the same client: floor.py reached over one pipe, and the
// relay floor, floor.py behind `evalbench relay-floor` (relay.go), a bare
// line relay as serve is a relay, so serve's own cost shows against it.
// It writes one JSON object of figures; bench/run.sh puts it next to
// jupyter_client's and writes the report.
package main
