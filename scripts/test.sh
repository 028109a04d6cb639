#!/usr/bin/env bash
# The whole test suite: vet, then every package's tests under the race
# detector. Fuzz targets run their seed corpora here; `go test -fuzz` runs
# them for longer.
set -euo pipefail
cd "$(dirname "$0")/.."
go vet ./...
go test -race -timeout 25m -count=1 ./...
