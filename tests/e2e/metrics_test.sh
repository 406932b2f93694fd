#!/usr/bin/env bash
# /metrics, /healthz and /readyz of a real histd, checked with prometheus_client's parser and
# a real Prometheus (tests/e2e/metrics_test.py says what is asserted).
#
#   metrics_test.sh HISTD [pytest args]
#
# Like client/python/test.sh: the virtual environment at ${HISTD_PYTHON_VENV:-$build/python-venv}
# ($build: HISTD_BUILD_DIR, else the directory above HISTD's server/) that client/python/venv.sh
# prepares (the histd package built from proto/, its test extras, prometheus_client; installed
# again only when client/python or proto/ changed). Prometheus is Debian's `prometheus`
# (deploy/install-deps.sh), or $PROMETHEUS_BIN.
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
bash "$root/client/python/venv.sh" "$venv"
echo "metrics: venv ready in $(( $(date +%s) - start )) s"
cd "$root/tests/e2e"
PYTHONDONTWRITEBYTECODE=1 "$venv/bin/python" -m pytest -q -p no:cacheprovider metrics_test.py "$@"
echo "metrics: passed in $(( $(date +%s) - start )) s"
