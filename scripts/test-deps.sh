#!/usr/bin/env bash
# Installs what the test suite needs on a fresh machine with Go and Python 3:
# the Python packages the tests drive for real (Jupyter's kernel gateway and
# ipykernel, nbformat, matplotlib, the mcp client SDK, papermill to check
# parameters against) and bash for sh cells.
set -euo pipefail
py=${PYTHON:-python3}
need=()
for spec in "kernel_gateway:jupyter_kernel_gateway" "ipykernel:ipykernel" "nbformat:nbformat" \
            "matplotlib:matplotlib" "jupyter_client:jupyter_client" "nbclient:nbclient" "mcp:mcp" \
            "papermill:papermill"; do
  mod=${spec%%:*} pkg=${spec##*:}
  "$py" -c "import $mod" 2>/dev/null || need+=("$pkg")
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
