#!/usr/bin/env bash
# End-to-end: histd and histctl as processes, on the CPU engine.
#   bash e2e_test.sh <path-to-histd> <path-to-histctl> [<path-to-histd_e2e_tool>]
# Starts histd on a free loopback port, ingests generated files with histctl (raw indices,
# CSV indices, x/y pairs), queries them back to .npy and compares them byte for byte with
# histograms computed independently by histd_e2e_tool (saturation included), also from .npy
# and standard input; checks info
# counters, region/rebin/transpose queries, projections, that a bad file is rejected with a
# non-zero exit and nothing of it applied, every other subcommand once, and that SIGTERM
# makes histd exit 0. Needs only bash and coreutils (no python, no numpy).
set -euo pipefail

HISTD=${1:?usage: e2e_test.sh HISTD HISTCTL [E2E_TOOL]}
HISTCTL=${2:?usage: e2e_test.sh HISTD HISTCTL [E2E_TOOL]}
TOOL=${3:-$(dirname "$HISTCTL")/../tests/histd_e2e_tool}
for f in "$HISTD" "$HISTCTL" "$TOOL"; do
  [[ -x $f ]] || { echo "e2e: not executable: $f" >&2; exit 2; }
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/histd_e2e.XXXXXX")
HISTD_PID=""
cleanup() {
  if [[ -n $HISTD_PID ]] && kill -0 "$HISTD_PID" 2>/dev/null; then
    kill -KILL "$HISTD_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

STEP=""
step() { STEP=$1; echo "e2e: $1"; }
fail() {
  echo "e2e: FAIL at '$STEP': $*" >&2
  if [[ -f $WORK/histd.log ]]; then
    echo "---- histd log (last 30 lines) ----" >&2
    tail -n 30 "$WORK/histd.log" >&2
  fi
  exit 1
}
# Runs histctl against the daemon; output to stdout.
ctl() { "$HISTCTL" --server="$ADDR" --timeout=60 "$@"; }
# The value of "key: value" in histctl's flat output.
field() { awk -v k="$1" -F': ' '$1 == k { print $2; found = 1 } END { if (!found) exit 1 }'; }
expect_eq() {  # expect_eq WHAT GOT WANT
  [[ "$2" == "$3" ]] || fail "$1: got '$2', want '$3'"
}
compare() { "$TOOL" compare "$1" "$2" || fail "$1 differs from $2"; }

# ---------------------------------------------------------------- start the daemon
# Starts histd on a free port with a snapshot file; sets HISTD_PID and ADDR.
start_histd() {
  rm -f "$WORK/ready"
  "$HISTD" --address=127.0.0.1:0 --ready_file="$WORK/ready" --engine=cpu \
    --snapshot_path="$WORK/histograms.snapshot" >>"$WORK/histd.log" 2>&1 &
  HISTD_PID=$!
  for _ in $(seq 1 300); do
    [[ -s $WORK/ready ]] && break
    kill -0 "$HISTD_PID" 2>/dev/null || fail "histd exited before it was ready"
    sleep 0.1
  done
  [[ -s $WORK/ready ]] || fail "histd did not write --ready_file within 30 s"
  ADDR=$(head -n 1 "$WORK/ready" | tr -d '[:space:]')
  echo "e2e: histd pid $HISTD_PID at $ADDR"
}
# SIGTERM, then the exit code must be 0.
stop_histd() {
  kill -TERM "$HISTD_PID"
  set +e
  wait "$HISTD_PID"
  RC=$?
  set -e
  HISTD_PID=""
  expect_eq "histd exit code after SIGTERM" "$RC" 0
}

step "start histd"
start_histd

step "health"
expect_eq "health" "$(ctl health)" "SERVING"

# ---------------------------------------------------------------- bin indices, raw .u32
ROWS=256 COLS=8192 CAP=200 N=2500000
step "create h ($ROWS x $COLS, cap $CAP)"
ctl create h --rows=$ROWS --cols=$COLS --cap=$CAP >"$WORK/create.txt" || fail "create exited $?"
expect_eq "created rows" "$(field spec.rows <"$WORK/create.txt")" "$ROWS"

step "generate $N indices"
"$TOOL" gen-indices $ROWS $COLS $CAP $N 20240611 "$WORK/samples.u32" "$WORK/expected.npy"
expect_eq "sample file size" "$(stat -c %s "$WORK/samples.u32")" "$((4 * N))"

step "ingest samples.u32"
ctl ingest h "$WORK/samples.u32" --message_bytes=262144 --progress=lines --progress_interval=0.2 \
  >"$WORK/ingest.txt" 2>"$WORK/ingest.err" || { cat "$WORK/ingest.err" >&2; fail "ingest exited non-zero"; }
cat "$WORK/ingest.txt"
MSGS=$(( (4 * N + 262143) / 262144 ))
grep -q "applied $MSGS messages ($N samples), rejected 0 messages" "$WORK/ingest.txt" ||
  fail "unexpected ingest summary: $(cat "$WORK/ingest.txt")"

step "query h -> npy, compare"
ctl query h -o "$WORK/h.npy" 2>/dev/null || fail "query exited non-zero"
compare "$WORK/h.npy" "$WORK/expected.npy"

step "info counters"
ctl info h >"$WORK/info.txt"
expect_eq samples_applied "$(field samples_applied <"$WORK/info.txt")" "$N"
expect_eq samples_rejected "$(field samples_rejected <"$WORK/info.txt")" 0
expect_eq messages_applied "$(field messages_applied <"$WORK/info.txt")" "$MSGS"
expect_eq total_count "$(field total_count <"$WORK/info.txt")" "$("$TOOL" sum "$WORK/expected.npy")"
SATURATED=$(field saturated_bins <"$WORK/info.txt")
[[ $SATURATED -gt 0 ]] || fail "no saturated bins; the hot block should saturate at cap $CAP"

step "region, rebin and transposed queries"
ctl query h --rows=100:131 --cols=2700:2800 -o "$WORK/region.npy" 2>/dev/null
"$TOOL" derive "$WORK/expected.npy" 100 131 2700 2800 1 1 0 "$WORK/region_expected.npy"
compare "$WORK/region.npy" "$WORK/region_expected.npy"
ctl query h --row_factor=3 --col_factor=1000 -o "$WORK/rebin.npy" 2>/dev/null
"$TOOL" derive "$WORK/expected.npy" 0 0 0 0 3 1000 0 "$WORK/rebin_expected.npy"
compare "$WORK/rebin.npy" "$WORK/rebin_expected.npy"
ctl query h --rows=120:140 --cols=2725:2760 --transpose --chunk_bytes=100 -o "$WORK/t.npy" 2>/dev/null
"$TOOL" derive "$WORK/expected.npy" 120 140 2725 2760 1 1 1 "$WORK/t_expected.npy"
compare "$WORK/t.npy" "$WORK/t_expected.npy"

step "projections"
ctl project h --collapse=rows -o "$WORK/proj_rows.npy"
"$TOOL" project "$WORK/expected.npy" rows "$WORK/proj_rows_expected.npy"
compare "$WORK/proj_rows.npy" "$WORK/proj_rows_expected.npy"
ctl project h --collapse=cols -o "$WORK/proj_cols.npy"
"$TOOL" project "$WORK/expected.npy" cols "$WORK/proj_cols_expected.npy"
compare "$WORK/proj_cols.npy" "$WORK/proj_cols_expected.npy"

# ---------------------------------------------------------------- a bad file
step "a file with an out-of-range index is rejected, nothing of it applied"
printf '\x00\x00\x00\x00\x00\x00\x20\x00' >"$WORK/bad.u32"  # 0 and 2097152 = rows*cols
if ctl ingest h "$WORK/bad.u32" --progress=off >"$WORK/bad.txt" 2>"$WORK/bad.err"; then
  fail "ingest of an out-of-range index exited 0"
fi
grep -q "INVALID_ARGUMENT" "$WORK/bad.err" || fail "no INVALID_ARGUMENT in: $(cat "$WORK/bad.err")"
ctl info h >"$WORK/info2.txt"
expect_eq "samples_rejected after bad file" "$(field samples_rejected <"$WORK/info2.txt")" 2
expect_eq "messages_rejected after bad file" "$(field messages_rejected <"$WORK/info2.txt")" 1
expect_eq "samples_applied after bad file" "$(field samples_applied <"$WORK/info2.txt")" "$N"
ctl query h -o "$WORK/h2.npy" 2>/dev/null
compare "$WORK/h2.npy" "$WORK/expected.npy"

step "a malformed file fails in the client"
printf 'abcdefg' >"$WORK/odd.u32"
if ctl ingest h "$WORK/odd.u32" --progress=off >/dev/null 2>"$WORK/odd.err"; then
  fail "ingest of a 7-byte .u32 exited 0"
fi
grep -q "not a multiple" "$WORK/odd.err" || fail "unexpected error: $(cat "$WORK/odd.err")"

step "unknown histogram: NOT_FOUND, exit 1"
set +e
ctl info nosuch >/dev/null 2>"$WORK/nf.err"
RC=$?
set -e
expect_eq "exit code for NOT_FOUND" "$RC" 1
grep -q "^histctl: NOT_FOUND: " "$WORK/nf.err" || fail "unexpected error: $(cat "$WORK/nf.err")"

# ---------------------------------------------------------------- CSV indices
step "CSV ingest"
ctl create c --rows=7 --cols=13 --cap=3 >/dev/null
"$TOOL" gen-indices 7 13 3 5000 7 "$WORK/samples.csv" "$WORK/c_expected.npy"
ctl ingest c "$WORK/samples.csv" --progress=off >/dev/null || fail "CSV ingest exited non-zero"
ctl query c -o "$WORK/c.npy" 2>/dev/null
compare "$WORK/c.npy" "$WORK/c_expected.npy"

step "npy ingest, then standard input"
ctl create n --rows=33 --cols=65 --cap=9 >/dev/null
"$TOOL" gen-indices 33 65 9 20000 11 "$WORK/samples.npy" "$WORK/n_expected.npy"
ctl ingest n "$WORK/samples.npy" --progress=off >/dev/null || fail "npy ingest exited non-zero"
ctl query n -o "$WORK/n.npy" 2>/dev/null
compare "$WORK/n.npy" "$WORK/n_expected.npy"
ctl create s --rows=33 --cols=65 --cap=9 >/dev/null
"$TOOL" gen-indices 33 65 9 20000 11 "$WORK/samples_s.u32" "$WORK/s_expected.npy"
ctl ingest s - --type=index --progress=off <"$WORK/samples_s.u32" >/dev/null || fail "stdin ingest exited non-zero"
ctl query s -o "$WORK/s.npy" 2>/dev/null
compare "$WORK/s.npy" "$WORK/n_expected.npy"

# ---------------------------------------------------------------- x/y pairs
step "x/y ingest with under/overflow"
XR=100 XC=300 NXY=400000
ctl create xy --rows=$XR --cols=$XC --cap=255 --x=-2.5,7.5 --y=0,1 >/dev/null
"$TOOL" gen-xy $XR $XC 255 $NXY 99 -2.5 7.5 0 1 "$WORK/xy.f32" "$WORK/xy_expected.npy" "$WORK/xy_counts.txt"
ctl ingest xy "$WORK/xy.f32" --progress=off >/dev/null || fail "xy ingest exited non-zero"
ctl query xy -o "$WORK/xy.npy" 2>/dev/null
compare "$WORK/xy.npy" "$WORK/xy_expected.npy"
ctl info xy >"$WORK/xy_info.txt"
for k in x_underflow x_overflow y_underflow y_overflow samples_outside; do
  expect_eq "xy $k" "$(field "$k" <"$WORK/xy_info.txt")" "$(awk -v k=$k '$1 == k { print $2 }' "$WORK/xy_counts.txt")"
done

# ---------------------------------------------------------------- the other subcommands
step "list, stats, cdf, quantiles, reduce, scan, transpose, matmul, merge, reset, delete"
ctl list >"$WORK/list.txt"
grep -q "^h " "$WORK/list.txt" || fail "list does not show h: $(cat "$WORK/list.txt")"
ctl stats >"$WORK/stats.txt"
grep -q "^engine: " "$WORK/stats.txt" || fail "stats has no engine line: $(cat "$WORK/stats.txt")"
ctl cdf c --collapse=cols -o "$WORK/cdf.csv" 2>/dev/null
expect_eq "cdf lines" "$(wc -l <"$WORK/cdf.csv")" 7
ctl quantiles xy --collapse=rows --p=0,0.5,1 -o "$WORK/q.csv" 2>/dev/null
expect_eq "quantile lines" "$(wc -l <"$WORK/q.csv")" 3
expect_eq "reduce sum of h" "$(ctl reduce --histogram=h --op=sum)" "$("$TOOL" sum "$WORK/expected.npy")"
printf '1,2,3\n4,5,6\n' >"$WORK/m.csv"
expect_eq "scan" "$(ctl scan "$WORK/m.csv" --along=cols | tr '\n' ' ')" "1,3,6 4,9,15 "
expect_eq "transpose" "$(ctl transpose "$WORK/m.csv" | tr '\n' ' ')" "1,4 2,5 3,6 "
printf '1,0\n0,1\n1,1\n' >"$WORK/b.csv"
expect_eq "matmul" "$(ctl matmul --a="$WORK/m.csv" --b="$WORK/b.csv" | tr '\n' ' ')" "4,5 10,11 "
ctl create c2 --rows=7 --cols=13 --cap=3 >/dev/null
ctl merge c c2 >/dev/null
ctl query c2 -o "$WORK/c2.npy" 2>/dev/null
compare "$WORK/c2.npy" "$WORK/c_expected.npy"
if ctl merge c h >/dev/null 2>&1; then fail "merge of different shapes exited 0"; fi
ctl reset c2 >"$WORK/reset.txt"
expect_eq "total after reset" "$(field total_count <"$WORK/reset.txt")" 0
ctl delete c2 >/dev/null
if ctl info c2 >/dev/null 2>&1; then fail "info of a deleted histogram exited 0"; fi

# ---------------------------------------------------------------- graceful stop
step "snapshot on request"
ctl snapshot >"$WORK/snapshot.txt"
expect_eq "snapshot path" "$(field path <"$WORK/snapshot.txt")" "$WORK/histograms.snapshot"
[[ -s $WORK/histograms.snapshot ]] || fail "histctl snapshot wrote nothing"

step "SIGTERM"
stop_histd
[[ -s $WORK/histograms.snapshot ]] || fail "no snapshot written at shutdown"

# ---------------------------------------------------------------- restart from the snapshot
step "restart: histograms restored from the snapshot"
start_histd
ctl query h -o "$WORK/h_restored.npy" 2>/dev/null
compare "$WORK/h_restored.npy" "$WORK/expected.npy"
ctl list >"$WORK/list2.txt"
grep -q "^h " "$WORK/list2.txt" || fail "restored list does not show h: $(cat "$WORK/list2.txt")"
step "SIGTERM again"
stop_histd
echo "e2e: PASS"
