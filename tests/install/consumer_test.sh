#!/usr/bin/env bash
# Installs histd from a build tree into a temporary prefix (`cmake --install`), builds
# tests/install (a producer's program: find_package(histd), histd::client) against it, and
# runs it against the installed daemon: the installed tree is complete and usable.
#   bash consumer_test.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: consumer_test.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/histd_install.XXXXXX")
pid=""
cleanup() {
  if [[ -n $pid ]]; then kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
for f in bin/histd bin/histctl include/client/histd_client.h include/histd/v1/ingest.grpc.pb.h \
         lib/cmake/histd/histdConfig.cmake lib/cmake/histd/histdTargets.cmake; do
  [[ -e $work/prefix/$f ]] || { echo "install: missing $f" >&2; exit 1; }
done
"$work/prefix/bin/histd" --version | grep -q "^histd [0-9]" || { echo "histd --version" >&2; exit 1; }
"$work/prefix/bin/histctl" --version | grep -q "^histctl [0-9]" || { echo "histctl --version" >&2; exit 1; }
cmake -S "$here" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer" -j"$(nproc)" >/dev/null
"$work/prefix/bin/histd" --address=127.0.0.1:0 --engine=cpu --ready_file="$work/ready" \
  --log_level=off &
pid=$!
for _ in $(seq 1 100); do [[ -s $work/ready ]] && break; sleep 0.1; done
[[ -s $work/ready ]] || { echo "install: histd did not start" >&2; exit 1; }
out=$("$work/consumer/consumer" "$(head -n 1 "$work/ready")")
[[ $out == "bins 21" ]] || { echo "install: consumer printed '$out'" >&2; exit 1; }
echo "install: prefix complete, histd::client consumer built and served (bins 21)"
