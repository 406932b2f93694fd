#!/usr/bin/env bash
# Fault tests: histd as a process, stopped, killed and restarted, on the CPU engine.
#   bash fault_test.sh <path-to-histd> <path-to-histctl> [<path-to-histd_fault_producer>]
# Producers are histd_fault_producer processes (tests/e2e/fault_producer.cc): each streams
# seeded random bin indices over one ingest stream and logs every message it sends and every
# acknowledgement, flushed as they come, so that the samples acknowledged before a fault
# can be recomputed exactly. Histograms: 512 x 1024, cap 255, a few hits per bin, so that
# nothing saturates and counts compare exactly.
#   (a) SIGTERM while 4 producers stream: histd exits 0; every producer ends on the shutdown
#       notice with each message it sent acknowledged (applied, or UNAVAILABLE after the
#       notice); restarted from the snapshot, the histogram equals, bin for bin, the samples
#       of the applied messages, and info's samples/messages_applied equal theirs.
#   (b) kill -9 with --snapshot_interval=1s while 2 producers stream, 0.8 s after the third
#       periodic snapshot: every producer sees its stream break; restarted, every bin lies
#       between the samples acknowledged up to 1.5 s before the kill (interval, write time,
#       scheduling) and those sent; the loss is reported as a time span.
#   (c) a damaged snapshot (bytes inverted in the header or in the bins, truncated to half or
#       by one byte, a byte appended) stops the start: non-zero exit, DATA_LOSS in the log,
#       the file left as it was.
#   (d) --snapshot_path in a missing directory, under a regular file (unwritable even for
#       root), or in a chmod 555 directory, empty or holding a good snapshot (not as root,
#       where chmod does not stop writes): the start is refused, non-zero exit, an ERROR line
#       naming the directory, no --ready_file.
#   (e) the snapshot directory replaced by a regular file while serving with
#       --snapshot_interval=1s: a periodic snapshot fails with an ERROR line, `histctl
#       snapshot` exits non-zero, `histctl stats` counts both in snapshot_failures, and at
#       SIGTERM the final snapshot fails: an ERROR line, a non-zero exit, no "exited_cleanly".
# Every case runs (each in a subshell, with its own clean-up); the script fails if any does;
# a case that cannot run here (the read-only ones as root) reports SKIPPED.
# About 10 s on 2 cores. Needs bash >= 5 ($EPOCHREALTIME) and coreutils.
set -euo pipefail

HISTD=${1:?usage: fault_test.sh HISTD HISTCTL [FAULT_PRODUCER]}
HISTCTL=${2:?usage: fault_test.sh HISTD HISTCTL [FAULT_PRODUCER]}
PRODUCER=${3:-$(dirname "$HISTCTL")/../tests/histd_fault_producer}
for f in "$HISTD" "$HISTCTL" "$PRODUCER"; do
  [[ -x $f ]] || { echo "fault: not executable: $f" >&2; exit 2; }
done
[[ -n ${EPOCHREALTIME:-} ]] || { echo "fault: needs bash >= 5 (EPOCHREALTIME)" >&2; exit 2; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/histd_fault.XXXXXX")
trap 'chmod -R u+w "$WORK" 2>/dev/null; rm -rf "$WORK"' EXIT

ROWS=512 COLS=1024 CAP=255
BINS=$((ROWS * COLS))

# ---------------------------------------------------------------- helpers (per case)
CASE="" STEP="" LOG="" HISTD_PID="" ADDR="" PIDS=() PRODUCER_DIR=""
step() { STEP=$1; echo "fault: ($CASE) $1"; }
exec 3>&2  # fail() writes here, also from blocks whose stderr is silenced
fail() {
  echo "fault: ($CASE) FAIL at '$STEP': $*" >&3
  if [[ -n $LOG && -f $LOG ]]; then
    echo "---- $LOG (last 30 lines) ----" >&3
    tail -n 30 "$LOG" >&3
  fi
  exit 1
}
# Kills what the case left running; runs when its subshell exits.
case_cleanup() {
  local pid
  for pid in $HISTD_PID "${PIDS[@]}"; do
    kill -KILL "$pid" 2>/dev/null || true
  done
}
ctl() { "$HISTCTL" --server="$ADDR" --timeout=60 "$@"; }
field() { awk -v k="$1" -F'[: ] *' '$1 == k { print $2; found = 1 } END { if (!found) exit 1 }'; }
expect_eq() {  # expect_eq WHAT GOT WANT
  [[ "$2" == "$3" ]] || fail "$1: got '$2', want '$3'"
}
now_us() { echo "${EPOCHREALTIME/./}"; }
count() { grep -c -- "$1" "$2" 2>/dev/null || true; }  # lines of $2 matching $1 (0 when none)

# wait_exit PID SECONDS WHAT: waits for a child to exit (killing it after SECONDS); sets RC.
wait_exit() {
  local pid=$1 i
  for ((i = 0; i < $2 * 20; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.05
  done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    fail "$3 did not exit within $2 s"
  fi
  set +e
  wait "$pid"
  RC=$?
  set -e
}

# start_histd NAME FLAGS...: histd on a free port, log in $WORK/NAME.log; sets HISTD_PID, ADDR.
start_histd() {
  local name=$1
  shift
  LOG=$WORK/$name.log
  rm -f "$WORK/$name.ready"
  "$HISTD" --address=127.0.0.1:0 --ready_file="$WORK/$name.ready" --engine=cpu "$@" >>"$LOG" 2>&1 &
  HISTD_PID=$!
  for _ in $(seq 1 300); do
    [[ -s $WORK/$name.ready ]] && break
    kill -0 "$HISTD_PID" 2>/dev/null || fail "histd exited before it was ready"
    sleep 0.05
  done
  [[ -s $WORK/$name.ready ]] || fail "histd did not write --ready_file within 15 s"
  ADDR=$(head -n 1 "$WORK/$name.ready" | tr -d '[:space:]')
}
# stop_histd WANT_RC: SIGTERM, the exit code must be WANT_RC ("nonzero": anything but 0).
stop_histd() {
  kill -TERM "$HISTD_PID"
  wait_exit "$HISTD_PID" 30 "histd after SIGTERM"
  HISTD_PID=""
  if [[ $1 == nonzero ]]; then
    [[ $RC -ne 0 ]] || fail "histd exited 0 after SIGTERM"
  else
    expect_eq "histd exit code after SIGTERM" "$RC" "$1"
  fi
}
# start_refused NAME FLAGS...: histd must exit non-zero without becoming ready.
start_refused() {
  local name=$1
  shift
  LOG=$WORK/$name.log
  rm -f "$WORK/$name.ready"
  "$HISTD" --address=127.0.0.1:0 --ready_file="$WORK/$name.ready" --engine=cpu "$@" >>"$LOG" 2>&1 &
  HISTD_PID=$!
  for _ in $(seq 1 300); do
    [[ -s $WORK/$name.ready ]] && break
    kill -0 "$HISTD_PID" 2>/dev/null || break
    sleep 0.05
  done
  if [[ -s $WORK/$name.ready ]]; then
    kill -TERM "$HISTD_PID" 2>/dev/null || true
    wait_exit "$HISTD_PID" 30 "histd after SIGTERM"
    HISTD_PID=""
    fail "histd started (ready at $(cat "$WORK/$name.ready")) instead of refusing"
  fi
  wait_exit "$HISTD_PID" 15 "histd refusing to start"
  HISTD_PID=""
  [[ $RC -ne 0 ]] || fail "histd exited 0 instead of refusing to start"
}

# start_producers DIR N SEED0 FLAGS...: N producers of histogram f logging to DIR/pK.log;
# appends to PIDS.
start_producers() {
  local k
  PRODUCER_DIR=$1
  for ((k = 1; k <= $2; k++)); do
    "$PRODUCER" produce --server="$ADDR" --histogram=f --seed=$(($3 + k)) --log="$1/p$k.log" \
      --bins=$BINS "${@:4}" 2>"$1/p$k.err" &
    PIDS+=($!)
  done
}
# wait_producers WANT_RC WHAT: every producer in PIDS must exit WANT_RC.
wait_producers() {
  local i
  for i in "${!PIDS[@]}"; do
    wait_exit "${PIDS[$i]}" 30 "producer $((i + 1))"
    [[ $RC -eq $1 ]] || fail "producer $((i + 1)) exited $RC, want $1 ($2): $(cat "$PRODUCER_DIR/p$((i + 1)).err")"
  done
  PIDS=()
}
# wait_for LOG PATTERN N SECONDS: until LOG has N lines matching PATTERN.
wait_for() {
  local i
  for ((i = 0; i < $4 * 20; i++)); do
    [[ $(count "$2" "$1") -ge $3 ]] && return 0
    sleep 0.05
  done
  fail "fewer than $3 lines matching '$2' in $1 after $4 s"
}

# ---------------------------------------------------------------- (a) SIGTERM, 4 producers
case_sigterm() {
  local dir=$WORK/a p
  mkdir -p "$dir"
  step "start histd, create f, 4 producers"
  start_histd a1 --snapshot_path="$dir/h.snapshot" --shutdown_grace=10s
  ctl create f --rows=$ROWS --cols=$COLS --cap=$CAP >/dev/null
  # ~0.5 K samples a message, 2,000 messages/s each: many in flight when the signal comes.
  start_producers "$dir" 4 1000 --max_samples=1024 --rate=2000
  for p in 1 2 3 4; do wait_for "$dir/p$p.log" '^ack ' 1000 20; done

  step "SIGTERM while they stream: histd exits 0, every producer ends on the shutdown notice"
  stop_histd 0
  grep -q "snapshot_written why=shutdown histograms=1 " "$LOG" || fail "no shutdown snapshot line"
  wait_producers 3 "graceful shutdown: every message acknowledged"

  step "restart from the snapshot; f equals the acknowledged samples bin for bin"
  start_histd a2 --snapshot_path="$dir/h.snapshot"
  ctl query f -o "$dir/f.npy" 2>/dev/null || fail "query exited non-zero"
  "$PRODUCER" check --npy="$dir/f.npy" --cap=$CAP --mode=exact "$dir"/p[1-4].log \
    >"$dir/check.txt" || { cat "$dir/check.txt"; fail "restored f differs from the acknowledged samples"; }
  echo "fault: (a) $(tr '\n' ' ' <"$dir/check.txt")"
  [[ $(field messages_acked <"$dir/check.txt") -ge 4000 ]] || fail "too few messages acknowledged"
  ctl info f >"$dir/info.txt"
  expect_eq samples_applied "$(field samples_applied <"$dir/info.txt")" "$(field samples_acked <"$dir/check.txt")"
  expect_eq messages_applied "$(field messages_applied <"$dir/info.txt")" "$(field messages_acked <"$dir/check.txt")"
  stop_histd 0
}

# ---------------------------------------------------------------- (b) kill -9, 1 s snapshots
case_kill() {
  local dir=$WORK/b t_kill
  mkdir -p "$dir"
  step "start histd with --snapshot_interval=1s, create f, 2 producers"
  start_histd b1 --snapshot_path="$dir/h.snapshot" --snapshot_interval=1s
  ctl create f --rows=$ROWS --cols=$COLS --cap=$CAP >/dev/null
  # ~2 K samples a message, 250 messages/s each.
  start_producers "$dir" 2 2000 --max_samples=4096 --rate=250
  wait_for "$LOG" 'snapshot_written why=periodic ' 3 15
  sleep 0.8

  step "kill -9 0.8 s after the third periodic snapshot"
  t_kill=$(now_us)
  kill -KILL "$HISTD_PID"
  { wait_exit "$HISTD_PID" 10 "histd after kill -9"; } 2>/dev/null  # no "Killed" job notice
  HISTD_PID=""
  expect_eq "histd exit code after kill -9" "$RC" 137
  wait_producers 4 "stream broken"
  grep 'snapshot_written why=periodic' "$LOG" | tail -n 1 | sed 's/^/fault: (b) last: /'

  step "restart; each bin within [acknowledged up to 1.5 s before the kill, sent]"
  start_histd b2 --snapshot_path="$dir/h.snapshot"
  ctl query f -o "$dir/f.npy" 2>/dev/null || fail "query exited non-zero"
  "$PRODUCER" check --npy="$dir/f.npy" --cap=$CAP --mode=bounded --kill_time_us="$t_kill" \
    --window_ms=1500 "$dir"/p[1-2].log >"$dir/check.txt" ||
    { cat "$dir/check.txt"; fail "restored f is outside the bounds"; }
  echo "fault: (b) $(tr '\n' ' ' <"$dir/check.txt")"
  [[ $(field samples_lower_bound <"$dir/check.txt") -gt 0 ]] || fail "nothing acknowledged before the window"
  stop_histd 0
}

# ---------------------------------------------------------------- (c) damaged snapshots
case_damaged() {
  local dir=$WORK/c good size name
  mkdir -p "$dir"
  good=$WORK/a/h.snapshot
  [[ -s $good ]] || { step "a snapshot from (a)"; fail "no snapshot from case (a)"; }
  size=$(stat -c %s "$good")
  for name in header bins half short appended; do
    step "damaged snapshot: $name"
    cp "$good" "$dir/$name.snapshot"
    case $name in
      header) "$PRODUCER" flip "$dir/$name.snapshot" 4 4 ;;
      bins) "$PRODUCER" flip "$dir/$name.snapshot" $((size / 2)) 8 ;;
      half) truncate -s $((size / 2)) "$dir/$name.snapshot" ;;
      short) truncate -s $((size - 1)) "$dir/$name.snapshot" ;;
      appended) printf '\x01' >>"$dir/$name.snapshot" ;;
    esac
    cmp -s "$good" "$dir/$name.snapshot" && fail "the damage changed nothing"
    cp "$dir/$name.snapshot" "$dir/$name.copy"
    start_refused "c_$name" --snapshot_path="$dir/$name.snapshot"
    grep -q "DATA_LOSS" "$LOG" || fail "no DATA_LOSS in the log"
    grep "DATA_LOSS" "$LOG" | grep -qF "$dir/$name.snapshot" || fail "the DATA_LOSS line does not name the file"
    cmp -s "$dir/$name.snapshot" "$dir/$name.copy" || fail "the refused start changed the damaged file"
  done
}

# ---------------------------------------------------------------- (d) unwritable directory
# case_unwritable KIND: a start with its snapshot in an unwritable directory is refused
# with an ERROR line naming the directory.
case_unwritable() {
  local dir=$WORK/d_$1 snapdir
  mkdir -p "$dir"
  case $1 in
    missing)
      step "snapshot directory missing"
      snapdir=$dir/missing/dir ;;
    file)
      step "snapshot directory is a regular file"
      snapdir=$dir/regular
      : >"$snapdir" ;;
    readonly | readonly_with_snapshot)
      step "snapshot directory read-only (chmod 555), empty"
      snapdir=$dir/ro
      mkdir "$snapdir"
      if [[ $1 == readonly_with_snapshot ]]; then
        step "snapshot directory read-only (chmod 555), holding a good snapshot"
        [[ -s $WORK/a/h.snapshot ]] || fail "no snapshot from case (a)"
        cp "$WORK/a/h.snapshot" "$snapdir/h.snapshot"
      fi
      chmod 555 "$snapdir"
      if touch "$snapdir/probe" 2>/dev/null; then
        echo "fault: ($CASE) chmod 555 does not stop writes here (root?)"
        exit 77
      fi ;;
  esac
  start_refused "d_$1" --snapshot_path="$snapdir/h.snapshot"
  grep " ERROR " "$LOG" | grep -qF "$snapdir" || fail "no ERROR line naming $snapdir"
}

# ---------------------------------------------------------------- (e) final snapshot fails
case_final_fails() {
  local dir=$WORK/e failures
  mkdir -p "$dir/snapshots"
  step "start histd with --snapshot_interval=1s, ingest"
  start_histd e --snapshot_path="$dir/snapshots/h.snapshot" --snapshot_interval=1s
  ctl create f --rows=$ROWS --cols=$COLS --cap=$CAP >/dev/null
  "$PRODUCER" produce --server="$ADDR" --histogram=f --seed=3000 --log="$dir/p.log" --bins=$BINS \
    --messages=20 2>"$dir/p.err" || fail "producer exited $?: $(cat "$dir/p.err")"
  wait_for "$LOG" 'snapshot_written why=periodic ' 1 10

  step "the snapshot directory replaced by a regular file: periodic snapshots fail"
  rm -rf "$dir/snapshots"
  : >"$dir/snapshots"
  wait_for "$LOG" ' ERROR snapshot_failed why=periodic' 1 10
  if ctl snapshot >/dev/null 2>"$dir/snapshot.err"; then fail "histctl snapshot exited 0"; fi
  failures=$(ctl stats | field snapshot_failures) || fail "histctl stats has no snapshot_failures"
  [[ $failures -ge 2 ]] || fail "snapshot_failures $failures, want >= 2 (periodic, requested)"

  step "SIGTERM: the final snapshot fails, histd says so and exits non-zero"
  stop_histd nonzero
  sed -n '/signal_received/,$p' "$LOG" | grep " ERROR " | grep -q "snapshot" ||
    fail "no ERROR line about the final snapshot after the signal"
  if grep -q "exited_cleanly" "$LOG"; then fail "histd logged exited_cleanly"; fi
}

# ---------------------------------------------------------------- run every case
FAILED=()
run_case() {  # run_case NAME FUNCTION ARGS...
  local begin=$EPOCHREALTIME rc
  set +e
  (
    CASE=$1
    trap case_cleanup EXIT
    "${@:2}"
  )
  rc=$?
  set -e
  local took
  took=$(awk -v a="$begin" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
  if [[ $rc -eq 0 ]]; then
    echo "fault: ($1) PASS in $took s"
  elif [[ $rc -eq 77 ]]; then
    echo "fault: ($1) SKIPPED"
  else
    echo "fault: ($1) FAILED in $took s"
    FAILED+=("$1")
  fi
}
run_case a case_sigterm
run_case b case_kill
run_case c case_damaged
run_case d-missing case_unwritable missing
run_case d-file case_unwritable file
run_case d-readonly case_unwritable readonly
run_case d-readonly-with-snapshot case_unwritable readonly_with_snapshot
run_case e case_final_fails
if [[ ${#FAILED[@]} -gt 0 ]]; then
  echo "fault: FAIL: ${FAILED[*]}" >&2
  exit 1
fi
echo "fault: PASS"
