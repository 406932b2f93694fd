#!/usr/bin/env bash
# histd's connection and log flags as a user meets them: `histd --help` lists each with its
# default (gRPC core's server defaults, docs/operations.md), and a value out of range
# refuses the start with an error naming the flag.
#   bash flags_test.sh <path-to-histd>
set -euo pipefail
HISTD=${1:?usage: flags_test.sh HISTD}
fail() { echo "flags: FAIL: $*" >&2; exit 1; }

help=$("$HISTD" --help 2>&1 || true)
python3 - "$help" <<'PY' || fail "--help"
import re, sys
text = " ".join(sys.argv[1].split())  # absl wraps long lines
defaults = {
    "grpc_keepalive_time": "2h",
    "grpc_keepalive_timeout": "20s",
    "grpc_keepalive_permit_without_calls": "false",
    "grpc_http2_min_recv_ping_interval_without_data": "5m",
    "grpc_http2_max_ping_strikes": "2",
    "grpc_max_connection_age": "inf",
    "grpc_max_connection_age_grace": "inf",
    "log_format": '"text"',
    "log_level": '"info"',
}
bad = []
for flag, default in defaults.items():
    m = re.search(r"--%s \((.*?)\); default: ([^;]*);" % flag, text)
    if not m:
        bad.append(f"--{flag} is not listed")
    elif m.group(2) != default:
        bad.append(f"--{flag}: default {m.group(2)}, want {default}")
if bad:
    sys.exit("flags: " + "; ".join(bad))
print(f"flags: --help lists {len(defaults)} connection and log flags with their defaults")
PY

refused() {  # refused FLAG=VALUE NAME: histd must exit non-zero naming NAME
  local out rc=0
  out=$(timeout 30 "$HISTD" --address=127.0.0.1:0 --engine=cpu "$1" 2>&1) || rc=$?
  [[ $rc -ne 0 ]] || fail "$1 was accepted"
  grep -q "$2" <<<"$out" || fail "$1: the error does not name $2: $out"
}
refused --grpc_keepalive_time=0s grpc_keepalive_time
refused --grpc_max_connection_age=-1s grpc_max_connection_age
refused --grpc_http2_max_ping_strikes=-1 grpc_http2_max_ping_strikes
refused --log_format=xml log_format
echo "flags: PASS"
