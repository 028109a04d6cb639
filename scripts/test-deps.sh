#!/usr/bin/env bash
# Installs what the test suite needs on a fresh machine with Go and Python 3:
# the Python packages the tests drive for real (Jupyter's kernel gateway and
# ipykernel, nbformat, matplotlib, the mcp client SDK, papermill to check
# parameters against, jupytext to check Jupytext headers against; wheel,
# with which setuptools 64-70.0 builds the real editable install sessions'
# tests judge) and bash for sh cells.
set -euo pipefail
py=${PYTHON:-python3}
need=()
for spec in "kernel_gateway:jupyter_kernel_gateway" "ipykernel:ipykernel" "nbformat:nbformat" \
            "matplotlib:matplotlib" "jupyter_client:jupyter_client" "nbclient:nbclient" "mcp:mcp" \
            "papermill:papermill" "jupytext:jupytext" "wheel:wheel"; do
  mod=${spec%%:*} pkg=${spec##*:}
  # From /: in the checkout, `import mcp` finds the Go package's directory.
  (cd / && "$py" -c "import $mod" 2>/dev/null) || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ] && ! "$py" -m pip --version >/dev/null 2>&1; then
  echo "installing pip for $py"
  apt-get update -qq && apt-get install -y -qq python3-pip python3-venv
fi
if [ ${#need[@]} -gt 0 ]; then
  echo "installing python packages: ${need[*]}"
  pip=("$py" -m pip install --quiet --disable-pip-version-check)
  # A distribution's own Python refuses installs outside a venv (PEP 668);
  # the tests drive that interpreter, so install into it anyway.
  "${pip[@]}" "${need[@]}" || "${pip[@]}" --break-system-packages "${need[@]}"
fi
command -v bash >/dev/null || { apt-get update -qq && apt-get install -y -qq bash; }
# Enterprise Gateway, for the remote-kernel tests (tests/remote): in a venv of
# its own, because its pins (jupyter_client<7, pyzmq<25) conflict with the
# kernel gateway's. Its kernels run the venv's python, so ipykernel goes in
# too. The path is the one tests/remote looks in (EVALHOST_EG_VENV overrides).
eg_venv=${EVALHOST_EG_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/evalhost-test/enterprise-gateway-3.3.0}
if ! "$eg_venv/bin/python" -c "import enterprise_gateway, ipykernel" 2>/dev/null; then
  echo "installing Jupyter Enterprise Gateway 3.3.0 in $eg_venv"
  "$py" -m venv "$eg_venv" 2>/dev/null || { apt-get update -qq && apt-get install -y -qq python3-venv && "$py" -m venv "$eg_venv"; }
  "$eg_venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    'jupyter_enterprise_gateway==3.3.0' 'jupyter_client<7' 'pyzmq<25' ipykernel
fi
# IPython 9 for a second run of the runner's tests (scripts/test.sh): the
# machine's python3 has the IPython the rest of the suite uses, and an
# IPython 9 change went unnoticed. A venv of its own with the newest IPython,
# matplotlib and nbformat (what the runner's tests import), renewed weekly so
# "newest" stays true; the same path scripts/test.sh runs. IPython 9 needs
# Python 3.11+: python3, else the newest python3.1N on PATH (Ubuntu 22.04's
# python3 is 3.10). Failing to make it fails the tests, never skips them.
ipy_venv=${EVALHOST_IPYTHON9_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/evalhost-test/ipython9}
ipy_pip=("$ipy_venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade 'ipython>=9' matplotlib nbformat)
ipy_ok() { "$ipy_venv/bin/python" -c 'import IPython, matplotlib, nbformat; assert IPython.version_info >= (9,)' 2>/dev/null; }
ipy_base() {
  local c
  for c in "$py" python3.14 python3.13 python3.12 python3.11; do
    if command -v "$c" >/dev/null && "$c" -c 'import sys; assert sys.version_info >= (3, 11)' 2>/dev/null; then
      echo "$c"; return 0
    fi
  done
  return 1
}
# --clear: what an earlier run left (a venv without pip, where ensurepip was
# missing; a pip run cut short) is made again, not failed on at every run.
ipy_make() {
  "$base" -m venv --clear "$ipy_venv" 2>/dev/null || {
    apt-get update -qq &&
      apt-get install -y -qq "python$("$base" -c 'import sys; print("%d.%d" % sys.version_info[:2])')-venv" &&
      "$base" -m venv --clear "$ipy_venv"
  }
}
if ! ipy_ok; then
  base=$(ipy_base) ||
    { echo "test-deps: IPython 9 needs Python 3.11+; $py is $("$py" -V 2>&1), and no python3.11+ is on PATH" >&2; exit 1; }
  echo "installing the newest IPython 9 in $ipy_venv (from $base)"
  if ! { "$ipy_venv/bin/python" -m pip --version >/dev/null 2>&1 && "${ipy_pip[@]}" && ipy_ok; }; then
    ipy_make
    "${ipy_pip[@]}"
  fi
  ipy_ok || { echo "test-deps: $ipy_venv has no IPython 9 with matplotlib and nbformat" >&2; exit 1; }
  touch "$ipy_venv/.made"
elif [ -z "$(find "$ipy_venv/.made" -mtime -7 2>/dev/null)" ]; then
  echo "renewing IPython 9 in $ipy_venv"
  if "${ipy_pip[@]}" && ipy_ok; then touch "$ipy_venv/.made"
  else echo "test-deps: could not renew $ipy_venv; testing the IPython it has" >&2; fi
fi
# sshd and iproute2 (ip, tc) for the second host the remote tests make in a
# network namespace; the package's service is not started, the tests run
# their own sshd inside the namespace.
if [ "$(id -u)" = 0 ]; then
  missing=()
  command -v sshd >/dev/null || [ -x /usr/sbin/sshd ] || missing+=(openssh-server)
  command -v ip >/dev/null && command -v tc >/dev/null || missing+=(iproute2)
  command -v unshare >/dev/null || missing+=(util-linux)
  if [ ${#missing[@]} -gt 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  fi
fi
