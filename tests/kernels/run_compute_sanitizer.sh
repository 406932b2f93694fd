#!/usr/bin/env bash
# compute-sanitizer over the GPU tests of histd's test binaries, as one queue of jobs that
# workers on every visible GPU take in turn, longest first, until the queue is empty or the
# time is up; then LOG_DIR/summary.txt: per tool the tests that completed under it (out of
# the tests selected), the tests that failed, the jobs cut off by the time limit and the test
# each was in, the jobs whose process died inside a test (that test and the exit status), the
# tests never started, the sanitizer's error and hazard counts, its distinct
# reports (what and where), and the slowest tests.
#
#   tests/kernels/run_compute_sanitizer.sh LOG_DIR TEST_BINARY...
#
# A job is one tool over a list of tests of one binary: under racecheck each test of the
# suites matching HISTD_SANITIZER_ALONE is a job of its own (they take 10-120 s each) and
# these go first; then, binary by binary in the order given, every other suite (typed and
# parameterized instances together) is one job per tool. The large tests
# divide their sample counts by HISTD_GPU_TEST_SCALE (tests/kernels/gpu_test_util.h): memcheck
# runs them at 1/4, synccheck at 1/16, racecheck and initcheck at 1/64, which keeps every path
# each test names; racecheck also runs the lean sweeps (HISTD_GPU_TEST_SWEEP=lean,
# tests/kernels/gpu_test_util.h: no case beyond 2^19 elements, fewer option sets). Tests named *Big* (2^31 elements: 64-bit
# offsets) run under memcheck only.
# Environment:
#   HISTD_SANITIZER_TOOLS    tools, in queue order (default: racecheck memcheck synccheck)
#   HISTD_SANITIZER_FILTER   gtest filter choosing the GPU tests (default '*Cuda*:*cuda*')
#   HISTD_SANITIZER_ALONE    extended regex of the suites whose tests racecheck runs one by one
#   HISTD_SANITIZER_DONE     a file of "TOOL TEST" lines (a previous run's LOG_DIR/clean.txt):
#                            those tests are not run again under that tool
#   HISTD_SANITIZER_WORKERS  jobs at a time per GPU (default 2)
#   HISTD_SANITIZER_SECONDS  no job starts after this many seconds, and running ones stop at it
#                            (default 3600)
# LOG_DIR/clean.txt lists "TOOL TEST" for every test that passed in a job with no report, so a
# sweep too long for one machine session resumes where it stopped (HISTD_SANITIZER_DONE).
# Racecheck leaves out two backpressure tests whose point is thousands of tiny batches:
# HardeningTest.AProducerThatNeverReadsAcksStopsBeingRead fills the transport's windows with
# 40,000 messages (a launch costs seconds under racecheck), and
# IngestServiceTest.BackpressureWithFewSmallBuffersLosesNothing pushes 1,200 messages per
# stager mode through two 4 KiB staging buffers, under which racecheck's host memory grows
# about 4 GB/s until the kernel's OOM killer ends the process (1 x H200, 128 GiB, 2025.3.1;
# bf11cf1's binary alike). Their kernels are those of the ingest service tests racecheck runs.
set -uo pipefail
usage="usage: run_compute_sanitizer.sh LOG_DIR TEST_BINARY..."
dir=${1:?$usage}
shift
[[ $# -ge 1 ]] || { echo "$usage" >&2; exit 2; }
binaries=("$@")
read -r -a tools <<<"${HISTD_SANITIZER_TOOLS:-racecheck memcheck synccheck}"
filter=${HISTD_SANITIZER_FILTER:-'*Cuda*:*cuda*'}
alone=${HISTD_SANITIZER_ALONE:-'^(CudaHistogram|CudaRoulo|CudaDeferred|CudaMatmul|CudaTranspose|CudaProjection|CudaReduceTyped|CudaScanTyped|CudaChainedScan|Engines/IngestTest)'}
done_file=${HISTD_SANITIZER_DONE:-/dev/null}
workers=${HISTD_SANITIZER_WORKERS:-2}
seconds=${HISTD_SANITIZER_SECONDS:-3600}
racecheck_skips='AProducerThatNeverReadsAcksStopsBeingRead|BackpressureWithFewSmallBuffersLosesNothing'
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
mkdir -p "$dir/jobs"
: >"$dir/queue.ranked"
: >"$dir/selected"
start=$(date +%s)
end=$((start + seconds))

# The queue: one line per job, "TOOL BINARY TEST:TEST:...".
for tool in "${tools[@]}"; do
  case $tool in memcheck | racecheck | synccheck | initcheck) ;; *) echo "unknown tool $tool" >&2; exit 2 ;; esac
done
for bin in "${binaries[@]}"; do
  for tool in "${tools[@]}"; do
    "$bin" --gtest_list_tests --gtest_filter="$filter" |
      awk '/^[^ ]/ { suite = $1; next } /^  / { print suite $1 }' |
      { [[ $tool == memcheck ]] && cat || grep -v 'Big'; } |
      { [[ $tool == racecheck ]] && grep -v -E "$racecheck_skips" || cat; } |
      grep -v -x -F -f <(awk -v t="$tool" '$1 == t { print $2 }' "$done_file") |
      while read -r test; do echo "$tool $test" >>"$dir/selected"; echo "$test"; done |
      awk -v tool="$tool" -v bin="$bin" -v alone="$alone" '
        { group = $0; sub(/\..*/, "", group); sub(/\/[0-9]+$/, "", group) }
        tool == "racecheck" && group ~ alone { print 0, tool, bin, $0; next }
        { if (group in tests) tests[group] = tests[group] ":" $0; else { order[n++] = group; tests[group] = $0 } }
        END { for (i = 0; i < n; ++i) print 1, tool, bin, tests[order[i]] }' >>"$dir/queue.ranked"
  done
done
# The tests racecheck runs one by one first (the longest jobs), then binary by binary.
sort -s -k1,1n "$dir/queue.ranked" | cut -d' ' -f2- >"$dir/queue"
total=$(wc -l <"$dir/queue")
echo 0 >"$dir/next"

scale_of() { case $1 in memcheck) echo 4 ;; synccheck) echo 16 ;; *) echo 64 ;; esac; }
sweep_of() { [[ $1 == racecheck ]] && echo lean || echo full; }
options_of() {
  case $1 in
    memcheck) echo "--report-api-errors no" ;;
    racecheck) echo "--racecheck-report analysis" ;;
  esac
}

# worker GPU: takes the next job until none is left or the time is up.
worker() {
  local gpu=$1 k tool bin tests left
  while :; do
    k=$({ flock 9; k=$(cat "$dir/next"); echo $((k + 1)) >"$dir/next"; echo "$k"; } 9>"$dir/lock")
    ((k < total)) || return 0
    left=$((end - $(date +%s)))
    ((left > 5)) || return 0
    read -r tool bin tests < <(sed -n "$((k + 1))p" "$dir/queue")
    : >"$dir/jobs/$k.san.log"
    # shellcheck disable=SC2046
    CUDA_VISIBLE_DEVICES=$gpu HISTD_GPU_TEST_SCALE=$(scale_of "$tool") HISTD_GPU_TEST_SWEEP=$(sweep_of "$tool") \
      timeout --kill-after=10 "$left" "$san" --tool "$tool" --error-exitcode 99 $(options_of "$tool") \
      --log-file "$dir/jobs/$k.san.log" "$bin" --gtest_filter="$tests" >"$dir/jobs/$k.test.log" 2>&1
    echo "$? $tool $(basename "$bin") gpu$gpu $(($(date +%s) - start)) $tests" >"$dir/jobs/$k.meta"
  done
}

gpus=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | tr '\n' ' ')
[[ -n ${CUDA_VISIBLE_DEVICES:-} ]] && gpus=${CUDA_VISIBLE_DEVICES//,/ }
for gpu in ${gpus:-0}; do
  for ((w = 0; w < workers; ++w)); do worker "$gpu" & done
done
wait

{
  echo "compute-sanitizer: $("$san" --version | tail -1); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | sort | uniq -c | tr -s ' ')"
  echo "$total jobs over GPUs ${gpus:-0}, $workers at a time per GPU, $(($(date +%s) - start)) s"
  : >"$dir/clean.txt"
  for tool in "${tools[@]}"; do
    selected=$(grep -c "^$tool " "$dir/selected")
    ok=0 errors=0 failed="" cut="" died="" reports=0
    for meta in "$dir"/jobs/*.meta; do
      [[ -e $meta ]] || continue
      read -r rc t _ _ _ _ <"$meta"
      [[ $t == "$tool" ]] || continue
      base=${meta%.meta}
      passed=$(grep '^\[       OK \]' "$base.test.log" | awk '{ print $4 }')
      n=$(grep -c . <<<"$passed")
      ok=$((ok + n))
      e=$(grep -h -o -E '(ERROR|RACECHECK) SUMMARY: [0-9]+' "$base.san.log" | awk '{ s += $3 } END { print s + 0 }')
      errors=$((errors + e))
      [[ $e -eq 0 && $n -gt 0 ]] && sed "s/^/$tool /" <<<"$passed" >>"$dir/clean.txt"
      failed+=$(grep '^\[  FAILED  \] [A-Za-z]' "$base.test.log" | grep -v 'listed below' | awk '{ printf " %s", $4 }')
      last_run=$(grep '^\[ RUN      \]' "$base.test.log" | tail -1 | awk '{ print $4 }')
      if [[ $rc == 124 || $rc == 137 ]]; then
        cut+=" $last_run"
      elif [[ $rc != 0 && -n $last_run ]] && ! grep -q -E "^\[ +(OK|FAILED|SKIPPED) +\] $last_run " "$base.test.log"; then
        died+=" $last_run (exit $rc)"
      fi
    done
    started=$(cat "$dir"/jobs/*.meta 2>/dev/null | awk -v t="$tool" '$2 == t' | wc -l)
    queued=$(grep -c "^$tool " "$dir/queue")
    echo "== $tool: $ok of $selected tests completed; errors/hazards reported: $errors;" \
      "failed:${failed:- none}; cut off by the time limit:${cut:- none};" \
      "died without a verdict:${died:- none}; jobs never started: $((queued - started))"
    for log in "$dir"/jobs/*.san.log; do
      [[ $(awk '{ print $2 }' "${log%.san.log}.meta" 2>/dev/null) == "$tool" ]] || continue
      awk '/^========= [^ ]/ { if (h != "") print h; h = substr($0, 11); n = 0; next }
           /^=========     (at|and) / { if (n++ == 0 || $2 == "and") h = h " | " substr($0, 15); next }
           END { if (h != "") print h }' "$log"
    done | grep -v -E '^(COMPUTE-SANITIZER|ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY)' |
      sed -E 's/0x[0-9a-f]+/0x./g; s/ by thread.*$//; s/ \[[0-9]+ hazards?\]//' | cut -c1-600 |
      sort | uniq -c | sort -rn | head -40
    echo "   slowest:"
    for meta in "$dir"/jobs/*.meta; do
      [[ -e $meta && $(awk '{ print $2 }' "$meta") == "$tool" ]] || continue
      grep '^\[       OK \]' "${meta%.meta}.test.log"
    done | sed -E 's/^\[       OK \] ([^ ]+) \(([0-9]+) ms\)/\2 \1/' | sort -rn | head -12 |
      awk '{ printf "     %7.1f s  %s\n", $1 / 1000, $2 }'
  done
} >"$dir/summary.txt"
cat "$dir/summary.txt"
