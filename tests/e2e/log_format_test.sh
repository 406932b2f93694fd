#!/usr/bin/env bash
# --log_format: histd as a process through start, ingest, refused requests and SIGTERM, once
# with --log_format=json and once with text; tests/e2e/log_lines.py then checks every line
# of stderr (JSON: an object with level, time, event and fields, parsed by python3's json;
# text: time, level and event on every line). The snapshot path, logged as given, holds a
# newline, a quote and a byte that is not UTF-8: they must neither split a line nor break its
# JSON.
#   bash log_format_test.sh <path-to-histd> <path-to-histctl>
set -euo pipefail

HISTD=${1:?usage: log_format_test.sh HISTD HISTCTL}
HISTCTL=${2:?usage: log_format_test.sh HISTD HISTCTL}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/histd_log.XXXXXX")
HISTD_PID=""
cleanup() {
  [[ -n $HISTD_PID ]] && kill -KILL "$HISTD_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() {
  echo "log_format: FAIL: $*" >&2
  [[ -f $LOG ]] && { echo "---- histd stderr ----" >&2; cat "$LOG" >&2; }
  exit 1
}
ctl() { "$HISTCTL" --server="$ADDR" --timeout=30 "$@"; }

SAMPLES=1000
python3 -c "import struct, sys; sys.stdout.buffer.write(struct.pack('<$SAMPLES' + 'I', *[i % 4 for i in range($SAMPLES)]))" \
  >"$WORK/samples.u32"
EVIL=$'evil\n"}\xff'
EVIL_HEX=$(printf '%s' "$EVIL" | od -An -tx1 | tr -d ' \n')
mkdir "$WORK/$EVIL"  # the snapshot directory

for format in json text; do
  LOG=$WORK/$format.log
  rm -f "$WORK/ready"
  "$HISTD" --address=127.0.0.1:0 --ready_file="$WORK/ready" --engine=cpu --cpu_threads=2 \
    --log_format=$format --snapshot_path="$WORK/$EVIL/$format.snapshot" 2>"$LOG" &
  HISTD_PID=$!
  for _ in $(seq 1 300); do
    [[ -s $WORK/ready ]] && break
    kill -0 "$HISTD_PID" 2>/dev/null || fail "histd exited before it was ready"
    sleep 0.1
  done
  [[ -s $WORK/ready ]] || fail "histd did not write --ready_file"
  ADDR=$(head -n 1 "$WORK/ready" | tr -d '[:space:]')

  ctl create h --rows=2 --cols=2 >/dev/null || fail "create"
  ctl ingest h "$WORK/samples.u32" --progress=off >/dev/null || fail "ingest"
  if ctl create h --rows=2 --cols=2 >/dev/null 2>&1; then fail "a second create of h succeeded"; fi
  if ctl ingest nosuch "$WORK/samples.u32" --progress=off >/dev/null 2>&1; then
    fail "ingest into an unknown histogram succeeded"
  fi
  kill -TERM "$HISTD_PID"
  set +e
  wait "$HISTD_PID"
  RC=$?
  set -e
  HISTD_PID=""
  [[ $RC -eq 0 ]] || fail "histd exited $RC after SIGTERM"
  python3 "$HERE/log_lines.py" "$format" "$LOG" "$SAMPLES" "$EVIL_HEX" || fail "$format log"
done
echo "log_format: PASS"
