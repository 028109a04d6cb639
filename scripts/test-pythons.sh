#!/usr/bin/env bash
# The runner's and the host's tests on other Python versions than the
# machine's python3 (which `make test` uses): each interpreter given, or every
# python3.N on PATH and under pyenv, gets a venv with IPython, matplotlib and
# nbformat (what the runner's tests import, as test-deps.sh's IPython 9 venv)
# under the test cache, and the two suites run against it. Not part of
# `make test` (which does run the runner's tests on IPython 9 as well as on
# python3's IPython): a clean machine has one Python, and this takes ~1 min each.
# An interpreter scripts/sid-python.sh made (3.14, 3.15 from Debian sid:
# `scripts/test-pythons.sh $(scripts/sid-python.sh 3.15)`) is used as it is,
# with no venv, and a test needing a module it lacks (matplotlib) skips.
#
# --all runs every package that starts a Python interpreter, ./tests too
# (~15 min each): sessions, serve, mcp, nbrun and shell take python3 from
# PATH, so the interpreter's directory goes first on it.
set -euo pipefail
cd "$(dirname "$0")/.."
cache=${XDG_CACHE_HOME:-$HOME/.cache}/evalhost-test
pkgs=(./runner ./host)
if [ "${1:-}" = --all ]; then
  shift
  pkgs+=(./sessions ./serve ./mcp ./nbrun ./shell ./tests)
fi
pythons=("$@")
if [ ${#pythons[@]} -eq 0 ]; then
  for p in $(compgen -c python3. | sort -u) "$HOME"/.pyenv/versions/3.*/bin/python3; do
    [[ $p == *-config || $p == *.py ]] && continue
    command -v "$p" >/dev/null 2>&1 || [ -x "$p" ] && pythons+=("$p")
  done
fi
failed=()
declare -A seen
for p in "${pythons[@]}"; do
  ver=$("$p" -c 'import sys; print("%d.%d" % sys.version_info[:2]); assert sys.version_info >= (3, 8)' 2>/dev/null) || continue
  [ -n "${seen[$ver]:-}" ] && continue
  seen[$ver]=1
  if [[ $p == */py*sid/usr/bin/* ]]; then # sid-python.sh's: no ensurepip for a venv, its modules in place
    echo "== $ver ($p, as it is)"
    PATH=$(dirname "$p"):$PATH EVALHOST_TEST_PYTHON=$p go test -count=1 "${pkgs[@]}" || failed+=("$ver")
    continue
  fi
  venv=$cache/py$ver
  if ! "$venv/bin/python" -c 'import IPython, matplotlib, nbformat' 2>/dev/null; then
    echo "== $ver: a venv with IPython, matplotlib and nbformat in $venv"
    "$p" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check ipython matplotlib nbformat
  fi
  echo "== $ver ($p)"
  # IPython, matplotlib and nbformat are there: a test that would skip for them fails
  PATH=$venv/bin:$PATH EVALHOST_TEST_PYTHON=$venv/bin/python EVALHOST_TEST_REQUIRE_MODULES=1 \
    go test -count=1 "${pkgs[@]}" || failed+=("$ver")
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "failed on: ${failed[*]}"
  exit 1
fi
