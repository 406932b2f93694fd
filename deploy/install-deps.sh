#!/usr/bin/env bash
# Installs every Debian 12 package that building and testing histd needs.
# Used by README.md, .ci/run and the Dockerfile alike. Idempotent: installs only what is missing.
#   install-deps.sh            build and test dependencies
#   install-deps.sh --runtime  only the shared libraries the built daemon and histctl load
# The CUDA toolkit is not a Debian package; when nvcc is on PATH (or in /usr/local/cuda/bin)
# the CUDA engine and kernels are built too. clang, its runtimes (libFuzzer, ASan, UBSan) and
# llvm (llvm-symbolizer, for readable sanitizer stacks) serve deploy/test-sanitize.sh.
# cpp-httplib serves the daemon's HTTP endpoint (/metrics, /healthz, /readyz); prometheus is
# the real server tests/e2e/metrics_test.sh scrapes the daemon with, and its promtool checks
# the Grafana dashboard's queries (tests/deploy/); chromium is the headless browser
# client/python/tests/test_page.py loads the web page in.
# libssl-dev: OpenSSL's libcrypto (token digests, certificate checks); openssl: the security
# tests make their certificates with it.
set -euo pipefail
if [ "${1:-}" = "--runtime" ]; then
  packages=(ca-certificates libgrpc++1.51 libgrpc29 libprotobuf32 libabsl20220623 libpng16-16
            libcpp-httplib0.11 libssl3)
else
  packages=(
    build-essential cmake pkg-config ca-certificates
    libgrpc++-dev libgrpc-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
    libabsl-dev libgtest-dev libgmock-dev
    libgmp-dev
    nlohmann-json3-dev
    libpng-dev
    libcpp-httplib-dev prometheus
    chromium
    libssl-dev openssl
    clang libclang-rt-14-dev llvm
    python3 python3-venv python3-pip
  )
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
