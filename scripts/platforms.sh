#!/usr/bin/env bash
# Vets every package, tests included, for the platforms evalhost builds on but
# whose tests do not run here: a call one of them lacks (syscall.SYS_SENDTO on
# linux/386), a constant past a 32-bit int, a _darwin.go file the BSDs needed
# too, fails here, not on a user's machine. Compiles only (vet type-checks
# after compiling what each package imports); no linkname or assembly here
# needs the linker. With a warm build cache ~1 s of CPU a target (3-4 s on a
# loaded machine); ~1 min a target without one. EVALHOST_PLATFORMS="os/arch
# ..." vets those instead.
set -euo pipefail
cd "$(dirname "$0")/.."
targets=${EVALHOST_PLATFORMS:-"linux/386 linux/arm linux/arm64 darwin/arm64 darwin/amd64 freebsd/amd64 openbsd/amd64 netbsd/amd64"}
fail=0
for target in $targets; do
	if ! GOOS=${target%/*} GOARCH=${target#*/} go vet ./...; then
		echo "platforms.sh: go vet fails for $target" >&2
		fail=1
	fi
done
exit $fail
