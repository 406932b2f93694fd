#!/usr/bin/env bash
# The virtual environment the Python tests run in (client/python/test.sh and
# tests/e2e/metrics_test.sh share it): creates VENV with `python3 -m venv` if missing and
# installs this package with its test extras and prometheus_client from PyPI, only when
# client/python or proto/ changed since the last install (a stamp in VENV), so that the
# second script and later runs reuse the first one's install.
#   venv.sh VENV
# Needs PyPI (or PIP_INDEX_URL / a warm pip cache) when it installs.
set -euo pipefail
venv=${1:?usage: venv.sh VENV}
root=$(cd "$(dirname "$0")/../.." && pwd)
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
stamp=$(cd "$root" && find client/python proto -type f \( -name '*.py' -o -name '*.pyi' \
          -o -name '*.proto' -o -name '*.toml' -o -name '*.cfg' -o -name '*.in' -o -name '*.sh' \) \
          -not -path '*/build/*' -not -name '*_pb2*' | sort | xargs sha256sum | sha256sum | cut -c1-16)
if [[ "$(cat "$venv/.histd-stamp" 2>/dev/null)" != "$stamp" ]] ||
   ! "$venv/bin/python" -c 'import histd, prometheus_client, pytest' 2>/dev/null; then
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check \
    "$root/client/python[test]" "prometheus_client==0.21.1"
  echo "$stamp" > "$venv/.histd-stamp"
fi
