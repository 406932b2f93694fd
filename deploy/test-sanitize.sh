#!/usr/bin/env bash
# The sanitizer part of the test suite (deploy/test.sh runs it last): an ASan+UBSan build
# with clang (HISTD_SANITIZE=ON, CPU engine only) of the engine/kernel tests and the service
# tests (CTest labels unit and service), then a short run of every libFuzzer target
# (tests/fuzz/) over its checked-in seed corpus, as many targets at a time as there are
# cores. Fails on a failing test, any sanitizer report, or a fuzzer's crash, leak, timeout
# or out-of-memory (its input is kept in BUILD/fuzz-artifacts/).
#   HISTD_SKIP_SANITIZE=1       skip all of it (exit 0)
#   HISTD_SANITIZE_BUILD_DIR    build directory (default: build-sanitize)
#   HISTD_FUZZ_SECONDS          fuzzing time in all, shared by the targets (default 60): each
#                               target gets HISTD_FUZZ_SECONDS / targets of one core
#   test-sanitize.sh --seeds    rewrite the seeds in tests/fuzz/corpus/ (histd_fuzz_seeds), then exit
# The fuzzers' own finds go to BUILD/fuzz-corpus/<target>/, never into the checked-in corpus.
set -euo pipefail
if [ "${HISTD_SKIP_SANITIZE:-0}" = 1 ]; then
  echo "test-sanitize: skipped (HISTD_SKIP_SANITIZE=1)"
  exit 0
fi
root=$(cd "$(dirname "$0")/.." && pwd)
build=${HISTD_SANITIZE_BUILD_DIR:-$root/build-sanitize}
fuzz_seconds=${HISTD_FUZZ_SECONDS:-60}
start=$(date +%s)
bash "$root/deploy/install-deps.sh"
# -O1 with line tables only: symbolized stacks, and a faster build than -O2 -g.
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only -DNDEBUG" \
  -DHISTD_SANITIZE=ON -DHISTD_WITH_CUDA=OFF >/dev/null

if [ "${1:-}" = "--seeds" ]; then
  cmake --build "$build" -j"$(nproc)" --target histd_fuzz_seeds
  "$build/tests/fuzz/histd_fuzz_seeds" "$root/tests/fuzz/corpus"  # regress-* files stay
  exit 0
fi

cmake --build "$build" -j"$(nproc)" --target histd_unit_tests histd_service_tests histd_fuzz
built=$(date +%s)

# Stop at the first report, with a stack; suppressions (none needed so far) go in
# tests/fuzz/ubsan.supp with a comment saying why.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# MallocTuningTest: ASan replaces glibc's malloc, so mallopt(M_ARENA_MAX) fails by design.
ctest --test-dir "$build" -L '^(unit|service)$' -E '^MallocTuningTest\.' -j"$(nproc)" \
  --output-on-failure
tested=$(date +%s)

# target:max_len (RPC programs stay small; the decoder needs room for a 4 KiB payload).
targets=(ingest_decoder:16384 snapshot:16384 npy:4096 csv:4096 histograms:2048 query:2048 compute:2048
         watch:2048 read_and_reset:2048)
per=$(( fuzz_seconds / ${#targets[@]} ))
[ "$per" -ge 1 ] || per=1
lanes=$(nproc)
mkdir -p "$build/fuzz-artifacts"
# fuzz TARGET MAX_LEN: one target for $per s; its log in fuzz-artifacts/TARGET.log.
fuzz() {
  mkdir -p "$build/fuzz-corpus/$1"
  "$build/tests/fuzz/histd_fuzz_$1" -max_total_time="$per" -max_len="$2" -timeout=30 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/fuzz-artifacts/$1-" \
    "$build/fuzz-corpus/$1" "$root/tests/fuzz/corpus/$1" > "$build/fuzz-artifacts/$1.log" 2>&1
}
echo "test-sanitize: fuzzing ${#targets[@]} targets for ${per} s each, ${lanes} at a time"
declare -A pid_of
for entry in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$lanes" ]; do wait -n || true; done
  fuzz "${entry%%:*}" "${entry#*:}" &
  pid_of[${entry%%:*}]=$!
done
failed=()
for entry in "${targets[@]}"; do
  t=${entry%%:*}
  if ! wait "${pid_of[$t]}"; then
    tail -n 60 "$build/fuzz-artifacts/$t.log"
    failed+=("$t")
  fi
  grep -E '^stat::(number_of_executed_units|average_exec_per_sec)|histd-fuzz: [0-9]+ findings' \
    "$build/fuzz-artifacts/$t.log" | tr '\n' ' ' | sed "s/^/test-sanitize: $t: /"; echo
done
end=$(date +%s)
echo "test-sanitize: build $((built - start)) s, tests $((tested - built)) s, fuzzing $((end - tested)) s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "test-sanitize: fuzz targets failed: ${failed[*]} (inputs and logs in $build/fuzz-artifacts/)"
  exit 1
fi
