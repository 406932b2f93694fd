#!/usr/bin/env bash
# deploy/ stays valid: yamllint (tests/deploy/yamllint.yaml) over the Kubernetes manifests,
# then tests/deploy/check_manifests.py: every object validated strictly against Kubernetes'
# schemas (kubernetes-validate's bundled copies), the ServiceMonitor against the Prometheus
# Operator's CRD models, the references between objects, and every flag the manifests,
# Dockerfile and systemd unit pass to histd against `histd --help`.
#   bash manifests_test.sh <path-to-histd>
# The Python packages (tests/deploy/requirements.txt, pinned) go into a venv at
# ${HISTD_DEPLOY_VENV:-<histd's build dir>/deploy-venv}, created on first use (needs PyPI
# once). Validation itself runs without a network: in a network namespace of its own
# (unshare -n) where the kernel allows one.
set -euo pipefail
HISTD=${1:?usage: manifests_test.sh HISTD}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
venv=${HISTD_DEPLOY_VENV:-$(cd "$(dirname "$HISTD")/.." && pwd)/deploy-venv}
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$here/requirements.txt"

offline=()
if unshare -n true 2>/dev/null; then
  offline=(unshare -n)
elif unshare -rn true 2>/dev/null; then
  offline=(unshare -rn)
else
  echo "manifests: no network namespace available; validating with the network present"
fi
"${offline[@]}" "$venv/bin/yamllint" --strict -c "$here/yamllint.yaml" \
  "$root/deploy/kubernetes.yaml" "$root/deploy/kubernetes-servicemonitor.yaml"
echo "manifests: yamllint clean"
"${offline[@]}" "$venv/bin/python" "$here/check_manifests.py" "$HISTD" "$root"
