#!/usr/bin/env bash
# Builds histd (installing what is missing) and starts the daemon in the foreground with
# defaults: 127.0.0.1:7440, the CUDA engine when a GPU is visible, else the CPU engine.
# Extra arguments go to histd, e.g. `bash deploy/start.sh --address=0.0.0.0:7440`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
HISTD_BUILD_TARGETS="histd histctl" bash "$root/deploy/build.sh"
exec "${HISTD_BUILD_DIR:-$root/build}/server/histd" "$@"
