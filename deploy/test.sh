#!/usr/bin/env bash
# Builds everything (installing what is missing) and runs every test with CTest: engine and
# kernel tests, service tests over loopback gRPC, and the end-to-end daemon + histctl test.
# GPU tests report SKIPPED where no GPU is visible.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HISTD_BUILD_DIR:-$root/build}
start=$(date +%s)
bash "$root/deploy/build.sh"
built=$(date +%s)
cd "$build"
ctest --output-on-failure -j"$(nproc)" "$@"
echo "test: build $((built - start)) s, ctest $(( $(date +%s) - built )) s"
HISTD_BUILD_DIR="$PWD" bash "$root/client/python/test.sh"  # the Python client's tests, in a venv under the build directory (the cwd here); HISTD_SKIP_PYTHON=1 skips them
# Last, the ASan+UBSan tests and a short run of every fuzz target (HISTD_SKIP_SANITIZE=1 skips them).
bash "$root/deploy/test-sanitize.sh"
