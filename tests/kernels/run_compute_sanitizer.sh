#!/usr/bin/env bash
# compute-sanitizer over the GPU tests of a test binary (histd_gpu_tests, histd_unit_tests): memcheck, racecheck, synccheck
# and initcheck, each split into gtest shards that run side by side on the one GPU, every
# shard under a time limit; a sanitizer log and a test log per tool and shard, then
# LOG_DIR/summary.txt: per shard its exit status, the sanitizer's summary line and gtest's
# verdict, and the distinct reports (what and where) of every tool.
#
#   tests/kernels/run_compute_sanitizer.sh TEST_BINARY LOG_DIR [TOOL...]
#
# TOOL: memcheck, racecheck, synccheck, initcheck (default: all four). The large tests divide
# their sample counts by HISTD_GPU_TEST_SCALE (tests/kernels/gpu_test_util.h): memcheck runs them
# at 1/4, synccheck at 1/16, racecheck and initcheck at 1/64, which keeps every path each test
# names; racecheck also sweeps the lean option sets (HISTD_GPU_TEST_SWEEP=lean,
# tests/kernels/histogram/histogram_test_util.h). CudaReduceScanBig (2^31 elements: 64-bit offsets
# in the kernels the other reduce and scan tests run) goes under memcheck only. Environment:
# HISTD_SANITIZER_FILTER (gtest filter; default the GPU tests), HISTD_SANITIZER_TIMEOUT (seconds
# per shard, default 900), HISTD_SANITIZER_SHARDS (shards per tool; default 3 memcheck, 4
# racecheck, 2 the others), HISTD_SANITIZER_SCALE (overrides every tool's scale).
# Times (H200, 2026-11-27, every tool at once beside a plain run): memcheck, synccheck and
# initcheck finish the suite in 5-9 minutes; racecheck took 40-120 s per large histogram test
# at 1/64 with the full sweep (24 tests in 8 minutes over 4 shards), and a dozen racecheck
# processes side by side finished almost nothing in two minutes: the whole suite under
# racecheck needs well over an hour of GPU time, so give it that, or a filter.
set -uo pipefail
usage="usage: run_compute_sanitizer.sh TEST_BINARY LOG_DIR [TOOL...]"
bin=${1:?$usage}
dir=${2:?$usage}
shift 2
tools=("$@")
[[ ${#tools[@]} -eq 0 ]] && tools=(memcheck racecheck synccheck initcheck)
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
filter=${HISTD_SANITIZER_FILTER:-'*Cuda*:*cuda*:FastDivide*:*Layout*'}
limit=${HISTD_SANITIZER_TIMEOUT:-900}
mkdir -p "$dir"

# shard TOOL INDEX SHARDS SCALE EXCLUDE SWEEP OPTION...
shard() {
  local tool=$1 i=$2 n=$3 scale=$4 exclude=$5 sweep=$6 f=$filter
  shift 6
  if [[ -n $exclude ]]; then [[ $f == *-* ]] && f+=":$exclude" || f+="-$exclude"; fi
  HISTD_GPU_TEST_SCALE=${HISTD_SANITIZER_SCALE:-$scale} HISTD_GPU_TEST_SWEEP=$sweep \
    GTEST_TOTAL_SHARDS=$n GTEST_SHARD_INDEX=$i \
    timeout --kill-after=10 "$limit" "$san" --tool "$tool" --error-exitcode 99 "$@" \
    --log-file "$dir/$tool.$i.san.log" "$bin" --gtest_filter="$f" >"$dir/$tool.$i.test.log" 2>&1
  echo $? >"$dir/$tool.$i.rc"
}

for tool in "${tools[@]}"; do
  case $tool in
    memcheck) n=3 scale=4 exclude='' sweep=full opts=(--report-api-errors no) ;;
    racecheck) n=4 scale=64 exclude='*Big*' sweep=lean opts=(--racecheck-report analysis) ;;
    synccheck) n=2 scale=16 exclude='*Big*' sweep=full opts=() ;;
    initcheck) n=2 scale=64 exclude='*Big*' sweep=full opts=() ;;
    *) echo "unknown tool $tool" >&2; exit 2 ;;
  esac
  n=${HISTD_SANITIZER_SHARDS:-$n}
  for ((i = 0; i < n; ++i)); do shard "$tool" "$i" "$n" "$scale" "$exclude" "$sweep" "${opts[@]}" & done
done
wait

{
  echo "compute-sanitizer: $("$san" --version | tail -1); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
  for rc in "$dir"/*.rc; do
    base=${rc%.rc}
    tests=$(grep -c '^\[       OK \]' "$base.test.log") skipped=$(grep -c '^\[  SKIPPED \] [A-Za-z]' "$base.test.log")
    failed=$(grep '^\[  FAILED  \] [A-Za-z]' "$base.test.log" | grep -v 'listed below' | sed 's/^\[  FAILED  \] //' | tr '\n' ' ')
    echo "$(basename "$base"): exit $(cat "$rc") (124: timed out), $tests tests OK, $skipped skipped, failed: ${failed:-none}," \
      "$(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY' "$base.san.log" | sed 's/^========= //' | tr '\n' ' ')," \
      "last test: $(grep '^\[ RUN      \]' "$base.test.log" | tail -1 | cut -c14-)"
  done
  for tool in "${tools[@]}"; do
    echo "== $tool: distinct reports (count | what | first frame)"
    for log in "$dir"/$tool.*.san.log; do
      awk '/^========= [^ ]/ { if (h != "") print h; h = substr($0, 11); n = 0; next }
           /^=========     (at|and) / { if (n++ == 0 || $2 == "and") h = h " | " substr($0, 15); next }
           END { if (h != "") print h }' "$log"
    done | grep -v -E '^(COMPUTE-SANITIZER|ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY)' |
      sed -E 's/0x[0-9a-f]+/0x./g; s/ by thread.*$//; s/ \[[0-9]+ hazards?\]//' | cut -c1-600 |
      sort | uniq -c | sort -rn | head -40
  done
} >"$dir/summary.txt"
cat "$dir/summary.txt"
