#!/usr/bin/env bash
# The whole test suite: vet, cross-builds, then every package's tests under the race
# detector. Fuzz targets run their seed corpora here; `go test -fuzz` runs
# them for longer.
set -euo pipefail
cd "$(dirname "$0")/.."
go vet ./...
# Built and vetted, not tested, on the other platforms evalhost supports:
# Linux-only calls live in _linux.go files with a fallback beside them.
for target in darwin/arm64 linux/arm64; do
	GOOS=${target%/*} GOARCH=${target#*/} go build ./...
	GOOS=${target%/*} GOARCH=${target#*/} go vet ./...
done
go test -race -timeout 25m -count=1 ./...
