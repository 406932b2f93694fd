#!/usr/bin/env bash
# Tests the histd Python package (client/python) against a real daemon, as CI does.
#
# Contract: creates (or reuses) a virtual environment at ${HISTD_PYTHON_VENV:-$build/python-venv}
# with `python3 -m venv` (Debian 12: python3-venv, python3-pip; deploy/install-deps.sh installs
# them), installs this package with its test extras from PyPI (client/python/venv.sh: `pip
# install client/python[test]`, whose wheel is built in an isolated environment that generates
# the gRPC stubs from proto/ with the pinned grpcio-tools; skipped when the venv already holds
# the current sources), then runs pytest on client/python/tests.
# The tests start the daemon at ${HISTD_BIN:-$build/server/histd} (CPU engine, a free port),
# so build it first (deploy/test.sh does). $build is ${HISTD_BUILD_DIR:-<repo>/build}.
# HISTD_SKIP_PYTHON=1 skips everything; extra arguments go to pytest. Exits with pytest's
# status. Needs network access to PyPI (or PIP_INDEX_URL / a warm pip cache).
set -euo pipefail
if [ "${HISTD_SKIP_PYTHON:-0}" = "1" ]; then
  echo "python: skipped (HISTD_SKIP_PYTHON=1)"
  exit 0
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${HISTD_BUILD_DIR:-$root/build}
venv=${HISTD_PYTHON_VENV:-$build/python-venv}
export HISTD_BIN=${HISTD_BIN:-$build/server/histd}
start=$(date +%s)
bash "$root/client/python/venv.sh" "$venv"
echo "python: venv and package ready in $(( $(date +%s) - start )) s"
export MPLBACKEND=Agg PYTHONDONTWRITEBYTECODE=1
cd "$root/client/python"
"$venv/bin/python" -m pytest -q -p no:cacheprovider tests "$@"
echo "python: passed in $(( $(date +%s) - start )) s"
