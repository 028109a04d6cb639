#!/usr/bin/env bash
# The whole test suite: vet, here and for the other platforms, then every
# package's tests under the race detector (a few that run on one goroutine
# in a pass without it). Fuzz targets run their seed corpora here; `go test
# -fuzz` runs them for longer.
set -euo pipefail
cd "$(dirname "$0")/.."
go vet ./...
# Vetted, not tested, on the other platforms evalhost builds on
# (docs/architecture.md#platforms): all at once, ~2 min from a cold cache.
bash scripts/platforms.sh
# Tests whose code runs on the test's goroutine alone (neither they nor what
# they call start one) and which cost minutes of CPU under the race detector
# (10-30x their time without it), which can report only what two goroutines
# do: the race pass skips them and the pass after it runs them without
# -race, in every package that has a test of that name. Their packages'
# concurrent tests stay in the race pass.
norace='^(TestGigabyteStream|TestDisplayInPiecesIsWhole|TestPayloadFileIsWhole|TestBigDisplaysInPiecesAreWhole|TestPlainWithRefsIsWhole'
norace+='|TestFitImage|TestCollectorHoldsBoundedImages|TestReadTextPage'
norace+='|TestCachedEncodingMatchesFresh|TestSavesKeepWhatTheyHandOut|TestStreamTextKeepsOutputs'
# Bounds on the bytes a call allocates, which the race detector
# multiplies: checked here only (testkit.RaceEnabled).
norace+='|TestReadNotebookBoundsMergedPairs|TestIpynbOfWideMetadata)$'
mapfile -t norace_pkgs < <(grep -rlE --include='*_test.go' "^func ${norace:1:-1}\(" . | xargs -n1 dirname | sort -u)
# Under a hostile environment: what a developer's shell or a container image
# sets (EVALHOST_DEBUG, PYTHONWARNINGS, an active venv, the reference
# runtime's PI_*) must not reach the code under test. testkit.Hermetic drops
# it in every test binary; were one to miss it, its tests fail here.
# go test starts packages' tests in the order given (two at a time on two
# cores) and prints their results in that order: the slowest go first, the
# rest (./...) fill in beside them. ./tests, two thirds of the race pass's
# time, is 43rd of 45 in ./...'s order: it started ~400 s in and ran its
# last ~580 s alone.
slowest=(./tests ./sessions ./runner ./tests/faults ./gateway/shared ./gateway ./tests/remote ./host)
hostile=(EVALHOST_DEBUG=1 PYTHONWARNINGS=error VIRTUAL_ENV=/nonexistent PI_PY=/bin/false)
env "${hostile[@]}" go test -race -timeout 25m -count=1 -skip "$norace" "${slowest[@]}" ./...
echo "== without the race detector: ${norace_pkgs[*]}"
env "${hostile[@]}" go test -timeout 10m -count=1 -run "$norace" "${norace_pkgs[@]}"
# The runner's tests again on IPython 9 (test-deps.sh made its venv), since
# python3 has IPython 8: ~40 s. Without the venv this fails: run make test-deps.
ipy_venv=${EVALHOST_IPYTHON9_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/evalhost-test/ipython9}
ipy_python=$ipy_venv/bin/python
"$ipy_python" -c 'import IPython; assert IPython.version_info >= (9,)' ||
	{ echo "test.sh: no IPython 9 in $ipy_venv: run make test-deps" >&2; exit 1; }
echo "== runner on IPython $("$ipy_python" -c 'import IPython; print(IPython.__version__)')"
EVALHOST_TEST_PYTHON=$ipy_python EVALHOST_TEST_REQUIRE_MODULES=1 go test -count=1 ./runner
