#!/usr/bin/env bash
# /metrics, /healthz and /readyz of a real histd, checked with prometheus_client's parser and
# a real Prometheus (tests/e2e/metrics_test.py says what is asserted).
#
#   metrics_test.sh HISTD [pytest args]
#
# Like client/python/test.sh: a virtual environment at ${HISTD_PYTHON_VENV:-$build/python-venv}
# ($build: HISTD_BUILD_DIR, else the directory above HISTD's server/), with the histd package
# (client/python, built from proto/) and prometheus_client from PyPI. The package is
# reinstalled only when client/python or proto/ changed since the last install (a stamp in the
# venv). Prometheus is Debian's `prometheus` (deploy/install-deps.sh), or $PROMETHEUS_BIN.
# Needs PyPI (or PIP_INDEX_URL / a warm pip cache) on the first run. HISTD_SKIP_PYTHON=1
# skips it (exit 77, which CTest reports as skipped).
set -euo pipefail
if [ "${HISTD_SKIP_PYTHON:-0}" = "1" ]; then
  echo "metrics: skipped (HISTD_SKIP_PYTHON=1)"
  exit 77
fi
[[ $# -ge 1 ]] || { echo "usage: $0 HISTD [pytest args]" >&2; exit 2; }
export HISTD_BIN=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${HISTD_BUILD_DIR:-$(cd "$(dirname "$HISTD_BIN")/.." && pwd)}
venv=${HISTD_PYTHON_VENV:-$build/python-venv}
start=$(date +%s)
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
stamp=$(cd "$root" && find client/python proto -type f \( -name '*.py' -o -name '*.proto' \
          -o -name '*.toml' -o -name '*.cfg' \) -not -path '*/build/*' -not -name '*_pb2*' \
          | sort | xargs sha256sum | sha256sum | cut -c1-16)
if [[ "$(cat "$venv/.histd-metrics-stamp" 2>/dev/null)" != "$stamp" ]] ||
   ! "$venv/bin/python" -c 'import histd, prometheus_client, pytest' 2>/dev/null; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "$root/client/python" "prometheus_client==0.21.1" "pytest>=7"
  echo "$stamp" > "$venv/.histd-metrics-stamp"
fi
echo "metrics: venv ready in $(( $(date +%s) - start )) s"
cd "$root/tests/e2e"
PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider metrics_test.py "$@"
echo "metrics: passed in $(( $(date +%s) - start )) s"
