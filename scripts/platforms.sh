#!/usr/bin/env bash
# Vets every package, tests included, for the platforms evalhost builds on but
# whose tests do not run here: a call one of them lacks (syscall.SYS_SENDTO on
# linux/386), a constant past a 32-bit int, a _darwin.go file the BSDs needed
# too, fails here, not on a user's machine. Compiles only (vet type-checks
# after compiling what each package imports); no linkname or assembly here
# needs the linker. The targets run at once, each one's output shown after it
# ends: with a warm build cache ~5 s in all (one at a time, 16 s: mostly the
# go command's cache checks), after a change to a large package ~1 min, and
# ~1 min a target with no cache. EVALHOST_PLATFORMS="os/arch ..." vets those
# instead.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=${EVALHOST_PLATFORMS:-"linux/386 linux/arm linux/arm64 darwin/arm64 darwin/amd64 freebsd/amd64 openbsd/amd64 netbsd/amd64"}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
pids=()
for target in $targets; do
	GOOS=${target%/*} GOARCH=${target#*/} go vet ./... >"$out/${target/\//_}" 2>&1 &
	pids+=($!)
done
fail=0
i=0
for target in $targets; do
	if ! wait "${pids[$i]}"; then
		echo "== platforms.sh: go vet fails for $target" >&2
		cat "$out/${target/\//_}" >&2
		fail=1
	fi
	i=$((i + 1))
done
exit $fail
