#!/usr/bin/env bash
# Installs what is missing (deploy/install-deps.sh), then configures and builds histd into
# ${HISTD_BUILD_DIR:-build}. The CUDA engine and kernels are built when nvcc is found
# (sm_90 unless CMAKE_CUDA_ARCHITECTURES is set in the environment).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HISTD_BUILD_DIR:-$root/build}
bash "$root/deploy/install-deps.sh"
args=(-S "$root" -B "$build" -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE:-RelWithDebInfo})
[ -n "${CMAKE_CUDA_ARCHITECTURES:-}" ] && args+=(-DCMAKE_CUDA_ARCHITECTURES="$CMAKE_CUDA_ARCHITECTURES")
cmake "${args[@]}" ${HISTD_CMAKE_ARGS:-}
cmake --build "$build" -j"$(nproc)" ${HISTD_BUILD_TARGETS:+--target $HISTD_BUILD_TARGETS}
