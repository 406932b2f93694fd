// Process-wide allocator settings for a daemon that moves megabyte messages between threads.
//
// glibc gives each thread that allocates its own heap arena (up to 8 per core). gRPC reads
// every 1 MiB ingest message into a fresh buffer on one of many threads and frees it on
// another, so with many arenas the freed megabytes sit in arenas other threads never reuse:
// RSS creeps up and new messages land on cold pages (page faults, kernel zeroing). Capping
// the arenas at 2 measured, on the H100 machine with 4 producers (loadgen, 30 s, 2026-11-23):
// 2,342 M samples/s instead of 1,622 M, peak RSS 416 MiB instead of 732 MiB.
// On 2 x H200 with 16 producers (2026-11-28, bench/results/loadgen.md): 0.86-0.88 of the bare
// sink on 16 and 32 cores, against 0.48-0.56 with glibc's default arenas and 0.56-0.72 with
// jemalloc (2-4 M page faults per run instead of 0.4 M).
//
// Even with 2 arenas, glibc hands the free top of a heap back to the kernel as soon as it
// passes its trim threshold (128 KiB, adjusted upwards only for mmap'd blocks), and the next
// messages fault those pages in again, zeroed. A trim threshold above the receive buffers'
// working set keeps them: 2-core VM, CPU engine, 2 producers of 1 MiB, 5 daemons each in
// alternation: 31-418 k page faults in 6 s of ingest with glibc's threshold, 0.8-6.4 k at
// 256 MiB. Freed memory up to the threshold (plus a quarter of it, the heap's growth step)
// stays in each arena's heap instead of returning to the kernel.
//
// Contract: call once at the start of main, before any thread exists. 0 leaves glibc's
// default. Each returns false when glibc refused the setting (or the C library is not glibc).
#pragma once

#include <cstddef>

namespace histd::server {

// histd's defaults, which the daemon's flags and the load generator's (for itself and the
// bare sink) both take.
inline constexpr int kDefaultMallocArenaMax = 2;
inline constexpr size_t kDefaultMallocTrimThreshold = size_t{256} << 20;

bool SetMallocArenaMax(int arenas);
// Sets glibc's trim threshold to `bytes` and its top pad (the heap's growth step) to a
// quarter of it; this also fixes the mmap threshold at glibc's initial 128 KiB.
bool SetMallocTrimThreshold(size_t bytes);

}  // namespace histd::server
