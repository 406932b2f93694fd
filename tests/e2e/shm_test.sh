#!/usr/bin/env bash
# Zero-copy local ingest with histd and histctl as processes (docs/shm-ingest.md), CPU engine:
#   bash shm_test.sh <path-to-histd> <path-to-histctl> <path-to-histd_e2e_tool>
# histd listens on a Unix socket with --allow_shm_ingest; `histctl ingest --shm` streams a
# generated file through a shared-memory ring, and the histogram must equal the one
# histd_e2e_tool computes independently. Then a producer is killed with SIGKILL in the
# middle of a shared-memory ingest: the daemon must stay healthy, every message of it must
# be whole or absent, no shared-memory object may be left behind, and the next producer must
# work. Without --allow_shm_ingest, `histctl ingest --shm` fails with FAILED_PRECONDITION.
set -euo pipefail

HISTD=${1:?usage: shm_test.sh HISTD HISTCTL E2E_TOOL}
HISTCTL=${2:?usage: shm_test.sh HISTD HISTCTL E2E_TOOL}
TOOL=${3:?usage: shm_test.sh HISTD HISTCTL E2E_TOOL}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/histd_shm.XXXXXX")
HISTD_PID=""
cleanup() {
  if [[ -n $HISTD_PID ]] && kill -0 "$HISTD_PID" 2>/dev/null; then kill -KILL "$HISTD_PID" || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
STEP=""
step() { STEP=$1; echo "shm: $1"; }
fail() {
  echo "shm: FAIL at '$STEP': $*" >&2
  [[ -f $WORK/histd.log ]] && tail -n 30 "$WORK/histd.log" >&2
  exit 1
}
ctl() { "$HISTCTL" --server="$ADDR" --timeout=60 "$@"; }
field() { awk -v k="$1" -F': ' '$1 == k { print $2; found = 1 } END { if (!found) exit 1 }'; }
start_histd() {  # start_histd FLAGS...
  rm -f "$WORK/ready"
  "$HISTD" --address="unix://$WORK/histd.sock" --ready_file="$WORK/ready" --engine=cpu \
    --cpu_threads=2 "$@" >>"$WORK/histd.log" 2>&1 &
  HISTD_PID=$!
  for _ in $(seq 1 300); do
    [[ -s $WORK/ready ]] && break
    kill -0 "$HISTD_PID" 2>/dev/null || fail "histd exited before it was ready"
    sleep 0.1
  done
  ADDR=$(head -n 1 "$WORK/ready" | tr -d '[:space:]')
  [[ $ADDR == "unix://$WORK/histd.sock" ]] || fail "ready file says '$ADDR'"
}
stop_histd() {
  kill -TERM "$HISTD_PID"
  set +e; wait "$HISTD_PID"; RC=$?; set -e
  HISTD_PID=""
  [[ $RC == 0 ]] || fail "histd exited $RC after SIGTERM"
}

step "start histd on a Unix socket with --allow_shm_ingest"
start_histd --allow_shm_ingest
[[ $(ctl health) == SERVING ]] || fail "not serving"

ROWS=256 COLS=4096 CAP=200 N=3000000
step "ingest --shm of $N indices equals the reference"
ctl create h --rows=$ROWS --cols=$COLS --cap=$CAP >/dev/null
"$TOOL" gen-indices $ROWS $COLS $CAP $N 7 "$WORK/samples.u32" "$WORK/expected.npy"
ctl ingest h "$WORK/samples.u32" --shm --message_bytes=262144 --window=8 --progress=off \
  >"$WORK/ingest.txt" 2>&1 || { cat "$WORK/ingest.txt" >&2; fail "ingest --shm exited non-zero"; }
MSGS=$(( (4 * N + 262143) / 262144 ))
grep -q "applied $MSGS messages ($N samples), rejected 0 messages" "$WORK/ingest.txt" ||
  fail "unexpected summary: $(cat "$WORK/ingest.txt")"
ctl query h -o "$WORK/h.npy" 2>/dev/null || fail "query exited non-zero"
"$TOOL" compare "$WORK/h.npy" "$WORK/expected.npy" || fail "histogram differs from the reference"
grep -q '"\?shm_region_registered' "$WORK/histd.log" || fail "no shm_region_registered event"

step "a producer killed mid-ingest leaves the daemon healthy"
ctl create k --rows=64 --cols=64 >/dev/null
# Every sample hits bin 0 of k: 16 Mi samples in 4 KiB messages of 1024 samples, one in
# flight at a time (about a second).
head -c $((64 << 20)) /dev/zero >"$WORK/zeros.u32"
"$HISTCTL" --server="$ADDR" ingest k "$WORK/zeros.u32" --shm --message_bytes=4096 --window=1 \
  --progress=off >/dev/null 2>&1 &
PRODUCER=$!
for _ in $(seq 1 100); do  # until some of it is applied
  applied=$(ctl info k | field samples_applied)
  [[ $applied -gt 0 ]] && break
  sleep 0.05
done
kill -KILL "$PRODUCER" 2>/dev/null || true
wait "$PRODUCER" 2>/dev/null || true
[[ $(ctl health) == SERVING ]] || fail "not serving after the producer died"
ls /dev/shm | grep -q "^histd-$PRODUCER-" && fail "the killed producer left /dev/shm/histd-$PRODUCER-*"
sleep 0.5  # its stream's last messages drain
applied=$(ctl info k | field samples_applied)
[[ $((applied % 1024)) == 0 ]] || fail "samples_applied $applied is not whole messages"
[[ $applied -lt $((16 << 20)) ]] || fail "the producer finished before it was killed"
echo "shm: killed after $applied samples applied"

step "the next producer works"
"$TOOL" gen-indices 64 64 255 100000 9 "$WORK/small.u32" "$WORK/small.npy"
ctl create s --rows=64 --cols=64 >/dev/null
ctl ingest s "$WORK/small.u32" --shm --progress=off >/dev/null || fail "second producer failed"
ctl query s -o "$WORK/s.npy" 2>/dev/null
"$TOOL" compare "$WORK/s.npy" "$WORK/small.npy" || fail "second histogram differs"
stop_histd

step "without --allow_shm_ingest: FAILED_PRECONDITION"
start_histd
ctl create h --rows=4 --cols=4 >/dev/null
set +e
ctl ingest h "$WORK/small.u32" --shm --progress=off >"$WORK/off.txt" 2>&1
RC=$?
set -e
[[ $RC != 0 ]] || fail "ingest --shm succeeded without --allow_shm_ingest"
grep -q "allow_shm_ingest" "$WORK/off.txt" || fail "no hint at the flag: $(cat "$WORK/off.txt")"
stop_histd
echo "shm: PASS"
