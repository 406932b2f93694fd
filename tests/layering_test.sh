#!/usr/bin/env bash
# The layering rule of docs/architecture.md, checked on every source file: a folder includes
# only the layers below it (and its own), and the daemon's core includes no gRPC.
#   model/                      model
#   kernels/                    model, kernels
#   engine/                     model, kernels, engine
#   experiments/                model, kernels, experiments
#   server/core/                model, engine, server/core; protobuf messages, never gRPC
#   server/http/                model, engine, server/core, server/http
#   server/grpc/, server/*.cc   everything of the daemon; the API (histd/v1) and gRPC
#   client/                     client; the API (histd/v1) and gRPC
# Usage: layering_test.sh <source root>. Prints each violation; exits 1 if there is any.
set -euo pipefail
root=${1:-$(dirname "$0")/..}
cd "$root"

allowed_for() {
  case "$1" in
    model/*) echo "model" ;;
    kernels/*) echo "model kernels" ;;
    engine/*) echo "model kernels engine" ;;
    experiments/*) echo "model kernels experiments" ;;
    server/core/*) echo "model engine server/core histd/v1" ;;
    server/http/*) echo "model engine server/core server/http" ;;
    server/*) echo "model engine server histd/v1" ;;
    client/*) echo "client histd/v1" ;;
    *) echo "" ;;
  esac
}

violations=0
while IFS= read -r file; do
  allowed=$(allowed_for "$file")
  [ -n "$allowed" ] || continue
  while IFS= read -r line; do
    inc=${line#*\"}
    inc=${inc%%\"*}
    case "$inc" in model/* | kernels/* | engine/* | experiments/* | server/* | client/* | \
                   tests/* | bench/* | histd/v1/*) ;;
      *) continue ;;  # system, Abseil, CUDA, relative includes within a folder
    esac
    ok=0
    for layer in $allowed; do
      case "$inc" in "$layer"/*) ok=1 ;; esac
    done
    # The core reads and writes protobuf messages (the snapshot format), not gRPC stubs.
    case "$file:$inc" in server/core/*:*.grpc.pb.h) ok=0 ;; esac
    if [ $ok = 0 ]; then
      echo "layering: $file includes \"$inc\" (allowed: $allowed)"
      violations=$((violations + 1))
    fi
  done < <(grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$file" || true)
  case "$file" in
    server/core/* | server/http/* | model/* | kernels/* | engine/*)
      if grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"](grpcpp|grpc)/' "$file"; then
        echo "layering: $file includes gRPC"
        violations=$((violations + 1))
      fi ;;
  esac
done < <(git ls-files -- '*.h' '*.cc' '*.cu' '*.cuh' 2>/dev/null || \
         find model kernels engine experiments server client -name '*.h' -o -name '*.cc' -o -name '*.cu' -o -name '*.cuh')

if [ $violations -gt 0 ]; then
  echo "layering: $violations violation(s)"
  exit 1
fi
echo "layering: ok"
