// Where one launch of the hot-window kernel spends its time, tile by tile: the kernel's
// thread 0 of each block stamps %globaltimer at the phase boundaries of every tile
// (HistogramVariantOptions::bench_timeline, kTimelineStamps in tile_view.cuh), and so
// does the deferred fold per (item, range) unit (bench_fold_timeline, agent_fold_deferred.cuh);
// this prints the mean of each phase over the launch's tiles and units, and their spans.
// A stamp placed after a barrier is taken when thread 0 arrives there, not when the barrier
// resolves (on the H100 a timer read does not wait for BAR.SYNC.DEFER_BLOCKING:
// docs/histogram-kernel.md, "Where the time goes"), so the wait for the block's last warp
// falls in the phase after the barrier.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_util.cuh"
#include "experiments/histogram/histogram_variants.h"
#include "kernels/common/device_sms.h"
#include "kernels/histogram/agent/agent_bucketed.cuh"
#include "kernels/histogram/agent/agent_fold_deferred.cuh"
#include "kernels/histogram/agent/agent_tile_windows.cuh"
#include "kernels/histogram/histogram_accumulate.h"
#include "kernels/histogram/tile_view.cuh"

namespace histd::bench {

// Phase sums over the units (tiles or fold units) of one timeline: units whose first or last
// stamp is 0 (never reached) are left out; group(u) splits the rest in two (0 or 1).
struct PhaseSums {
  std::vector<double> us[2];  // per group, per phase: summed microseconds
  size_t units[2] = {0, 0};
  unsigned long long first = ~0ull, last = 0;  // earliest start, latest end (ns)
  std::vector<double> slowest;                 // per phase: the unit with the longest span

  template <class Group>
  PhaseSums(const std::vector<unsigned long long>& stamps, int per_unit, Group group) {
    us[0].assign(per_unit - 1, 0.0);
    us[1].assign(per_unit - 1, 0.0);
    slowest.assign(per_unit - 1, 0.0);
    unsigned long long longest = 0;
    for (size_t u = 0; u * per_unit < stamps.size(); ++u) {
      const unsigned long long* s = &stamps[u * per_unit];
      if (s[0] == 0 || s[per_unit - 1] == 0) continue;
      const int g = group(u);
      ++units[g];
      for (int k = 0; k + 1 < per_unit; ++k) us[g][k] += double(s[k + 1] - s[k]) * 1e-3;
      first = std::min(first, s[0]);
      last = std::max(last, s[per_unit - 1]);
      if (s[per_unit - 1] - s[0] > longest) {
        longest = s[per_unit - 1] - s[0];
        for (int k = 0; k + 1 < per_unit; ++k) slowest[k] = double(s[k + 1] - s[k]) * 1e-3;
      }
    }
  }
  size_t Units() const { return units[0] + units[1]; }
  double Phase(int k) const { return us[0][k] + us[1][k]; }
  double Total() const {
    double t = 0;
    for (size_t k = 0; k < us[0].size(); ++k) t += Phase(int(k));
    return t;
  }
};

// Spins for spin_ns, then stamps %globaltimer: launched just before the stamped launch, it
// keeps the GPU busy while the host enqueues that launch, as back-to-back launches do.
__global__ void StampNowKernel(unsigned long long* out, unsigned long long spin_ns) {
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < spin_ns);
  *out = t;
}

// HISTD_BENCH_TIMELINE_DUMP=path: the raw stamps of one launch, for offline analysis: a
// line "marker before|after ns" (a one-thread kernel on the same stream before and after
// the launch), then "window b s0 .. s2", "tile t s0 .. s6" and "unit u s0 .. s3" (0 = not reached).
inline void DumpRawTimeline(const char* path, unsigned long long before, unsigned long long after,
                            const std::vector<unsigned long long>& windows, int window_stamps,
                            const std::vector<unsigned long long>& tiles, int tile_stamps,
                            const std::vector<unsigned long long>& units, int unit_stamps) {
  FILE* f = std::fopen(path, "w");
  if (f == nullptr) return;
  std::fprintf(f, "marker %llu %llu\n", before, after);
  auto rows = [&](const char* name, const std::vector<unsigned long long>& v, int per) {
    for (size_t u = 0; u * per < v.size(); ++u) {
      if (v[u * per] == 0) continue;
      std::fprintf(f, "%s %zu", name, u);
      for (int k = 0; k < per; ++k) std::fprintf(f, " %llu", v[u * per + k]);
      std::fprintf(f, "\n");
    }
  };
  rows("window", windows, window_stamps);
  rows("tile", tiles, tile_stamps);
  rows("unit", units, unit_stamps);
  std::fclose(f);
}

// A zeroed device buffer for `count` stamps, read back once.
class StampBuffer {
 public:
  explicit StampBuffer(size_t count) : count_(count) {
    BENCH_CUDA(cudaMalloc(&d_, count * sizeof(unsigned long long)));
    BENCH_CUDA(cudaMemset(d_, 0, count * sizeof(unsigned long long)));
  }
  ~StampBuffer() { cudaFree(d_); }
  StampBuffer(const StampBuffer&) = delete;
  StampBuffer& operator=(const StampBuffer&) = delete;
  unsigned long long* get() const { return d_; }
  std::vector<unsigned long long> Read() const {
    std::vector<unsigned long long> h(count_);
    BENCH_CUDA(cudaMemcpy(h.data(), d_, count_ * sizeof(h[0]), cudaMemcpyDeviceToHost));
    return h;
  }

 private:
  unsigned long long* d_ = nullptr;
  size_t count_;
};

// Runs the launch once more with its two stamp buffers attached (bench_timeline and
// bench_fold_timeline of HistogramVariantOptions) and waits for it.
inline void RunStamped(const histd::cuda::HistogramAccumulateArgs& args, histd::cuda::HistogramVariantOptions o,
                       void* ws, const StampBuffer& first,
                       const StampBuffer& second) {
  o.bench_timeline = first.get();
  o.bench_fold_timeline = second.get();
  BENCH_OK(histd::cuda::HistogramVariant::run(args, o, ws, nullptr));
  BENCH_CUDA(cudaDeviceSynchronize());
}

// args and o: the launch as timed (its workspace `ws` already sized); launch_ms: its median time.
inline void PrintTileTimeline(const std::string& workload, const histd::cuda::HistogramAccumulateArgs& args,
                              histd::cuda::HistogramVariantOptions o, void* ws,
                              double launch_ms) {
  namespace hg = histd::cuda::histogram;
  constexpr int kStamps = hg::kTimelineStamps, kFold = hg::kFoldTimelineStamps;
  StampBuffer tile_stamps((args.total_samples / 1024 + size_t(args.work_count) + 1) * kStamps);
  StampBuffer fold_stamps(size_t(args.work_count) * hg::kDeferMaxRanges * kFold);
  // The window kernel's blocks: at most what fits at once (2,048 threads an SM).
  const size_t window_blocks = size_t(histd::cuda::CurrentDeviceSmCountOr()) * (2048 / hg::kWindowThreads);
  StampBuffer markers(2), window_stamps(window_blocks * hg::kWindowTimelineStamps);
  BENCH_CUDA(cudaDeviceSynchronize());
  StampNowKernel<<<1, 1>>>(markers.get(), 200000);
  o.bench_window_timeline = window_stamps.get();
  RunStamped(args, o, ws, tile_stamps, fold_stamps);
  StampNowKernel<<<1, 1>>>(markers.get() + 1, 0);
  BENCH_CUDA(cudaDeviceSynchronize());
  const std::vector<unsigned long long> marks = markers.Read(), ws_stamps = window_stamps.Read();
  if (const char* dump = std::getenv("HISTD_BENCH_TIMELINE_DUMP"); dump != nullptr)
    DumpRawTimeline(dump, marks[0], marks[1], ws_stamps, hg::kWindowTimelineStamps, tile_stamps.Read(), kStamps,
                    fold_stamps.Read(), kFold);
  // A block's first tile (tiles are dealt round-robin to one block per SM) against its later
  // ones: the first pays cold instruction caches and every block starting at once.
  const size_t blocks = size_t(histd::cuda::CurrentDeviceSmCountOr());
  const PhaseSums tiles(tile_stamps.Read(), kStamps, [&](size_t t) { return t < blocks ? 0 : 1; });
  const char* names[kStamps - 1] = {"read the tile's item and window (chosen before this kernel)", "clear the window's lanes",
                                    "stream and fold (block thread 0's loop)",
                                    "drain thread 0's miss queue (to its arrival at the barrier)",
                                    "wait for the block's last warp, merge the window (or stage it for the second kernel)",
                                    "outflow, barrier, the tile's pending count"};
  auto mean = [&](int g, int k) {
    return tiles.units[g] == 0 ? std::string("-") : Fmt("%.2f", tiles.us[g][k] / tiles.units[g]);
  };
  const size_t n = tiles.Units();
  Table t({"phase of a tile (" + workload + ", " + Fmt("%zu", n) + " tiles)", "us per tile", "a block's first tile",
           "later tiles", "share"});
  for (int k = 0; k + 1 < kStamps; ++k)
    t.Add({names[k], Fmt("%.2f", tiles.Phase(k) / n), mean(0, k), mean(1, k),
           Fmt("%.1f%%", 100 * tiles.Phase(k) / tiles.Total())});
  t.Add({"whole tile", Fmt("%.2f", tiles.Total() / n), "", "", "100%"});
  t.Add({"first kernel's span (first tile start to last tile end)", Fmt("%.2f", double(tiles.last - tiles.first) * 1e-3),
         "", "", "-"});
  // The deferred fold: units that merged a range (empty units are passed over unstamped;
  // block exits are rows with only a first stamp, which PhaseSums leaves out).
  const std::vector<unsigned long long> s = fold_stamps.Read();
  const PhaseSums fold(s, kFold, [](size_t) { return 0; });
  const char* fold_names[kFold - 1] = {"start the unit (dealt and resolved while the block counted the previous one)",
                                       "read the records and count the entries (to thread 0's arrival at the barrier)",
                                       "wait for the other warps and the dealer, merge the range and its staged windows"};
  if (const size_t units = fold.Units(); units != 0) {
    t.Add({Fmt("second kernel: %zu (item, range) units", units), "us per unit", "", "", "share"});
    for (int k = 0; k + 1 < kFold; ++k)
      t.Add({fold_names[k], Fmt("%.2f", fold.Phase(k) / units), "", "", Fmt("%.1f%%", 100 * fold.Phase(k) / fold.Total())});
    t.Add({"whole unit", Fmt("%.2f", fold.Total() / units), "", "", "100%"});
    t.Add({"second kernel's span (first unit start to last unit end)", Fmt("%.2f", double(fold.last - fold.first) * 1e-3),
           "", "", "-"});
    // How evenly the units kept the blocks busy to the end: the last moments at which every
    // block (the most units ever in flight at once) and half of them still held a unit.
    {
      std::vector<std::pair<unsigned long long, int>> events;  // (time, +1 start / -1 end)
      for (size_t u = 0; u * kFold < s.size(); ++u) {
        if (s[u * kFold] == 0 || s[u * kFold + kFold - 1] == 0) continue;
        events.push_back({s[u * kFold], 1});
        events.push_back({s[u * kFold + kFold - 1], -1});
      }
      std::sort(events.begin(), events.end());  // at equal times an end (-1) before a start
      int busy = 0, most = 0;
      for (const auto& e : events) most = std::max(most, busy += e.second);
      unsigned long long all_busy = fold.first, half_busy = fold.first;
      busy = 0;
      for (const auto& e : events) {
        busy += e.second;
        if (busy >= most) all_busy = e.first;
        if (2 * busy >= most) half_busy = e.first;
      }
      // Block exits (FoldDeferredBlock stamps them as rows past the units with only a first stamp).
      unsigned long long last_exit = 0;
      for (size_t u = 0; u * kFold < s.size(); ++u)
        if (s[u * kFold] != 0 && s[u * kFold + kFold - 1] == 0) last_exit = std::max(last_exit, s[u * kFold]);
      auto after = [&](unsigned long long ns) { return (double(ns) - double(fold.first)) * 1e-3; };
      if (last_exit != 0)
        t.Add({"second kernel: its last block's exit (us after its last unit end)",
               Fmt("%.2f", (double(last_exit) - double(fold.last)) * 1e-3), "", "", "-"});
      t.Add({Fmt("second kernel: last moment all %d blocks / half of them held a unit, last unit end (us after its first unit)", most),
             Fmt("%.1f / %.1f / %.1f", after(all_busy), after(half_busy), after(fold.last)), "", "", "-"});
    }
    t.Add({"gap from the first kernel's last tile to the second's first unit",
           Fmt("%.2f", (double(fold.first) - double(tiles.last)) * 1e-3), "", "", "-"});
  }
  // The window kernel (ChooseTileWindowsKernel): its blocks that chose a window (stamp 3
  // reached; the others only planned), launched after a one-thread kernel that spins and
  // then stamps (as a previous launch's last kernel would end).
  constexpr int kWin = hg::kWindowTimelineStamps;
  const PhaseSums win(ws_stamps, kWin, [&](size_t b) { return ws_stamps[b * kWin + 3] != 0 ? 0 : 1; });
  if (win.units[0] != 0) {
    const char* win_names[kWin - 1] = {"plan the launch's tiles (every block)", "find the block's tile's item",
                                       "read the item, issue the probe loads, set up the grid and shapes",
                                       "count the probes on the coarse grid", "summed-area table (two scans)",
                                       "score every (shape, placement)", "decode and fit the winner",
                                       "estimate the misses, write the tile's window"};
    double chose = 0;
    for (int k = 0; k + 1 < kWin; ++k) chose += win.us[0][k];
    t.Add({"window kernel (" + Fmt("%zu", win.units[0]) + " blocks that chose a window)", "us per block", "", "", ""});
    for (int k = 0; k + 1 < kWin; ++k)
      t.Add({win_names[k], Fmt("%.2f", win.us[0][k] / win.units[0]), "", "", Fmt("%.1f%%", 100 * win.us[0][k] / chose)});
    t.Add({"the previous kernel's end to the window kernel's first block", Fmt("%.2f", (double(win.first) - double(marks[0])) * 1e-3),
           "", "", "-"});
    t.Add({"window kernel's span (first block start to last block end)", Fmt("%.2f", double(win.last - win.first) * 1e-3),
           "", "", "-"});
    t.Add({"the window kernel's last block to the first tile", Fmt("%.2f", (double(tiles.first) - double(win.last)) * 1e-3),
           "", "", "-"});
  }
  // What the spans leave out: the planner and the window choice (ChooseTileWindowsKernel)
  // before the first tile, launch latencies, the tail after the last stamp.
  const unsigned long long last = fold.Units() != 0 ? fold.last : tiles.last;
  t.Add({"outside the spans (plan and window kernels, launch latencies)",
         Fmt("%.2f", launch_ms * 1e3 - (double(last) - double(tiles.first)) * 1e-3), "", "", "-"});
  t.Add({"launch (median, all kernels)", Fmt("%.2f", launch_ms * 1e3), "", "", "-"});
  t.Print("Hot-window tile timeline (one launch; globaltimer stamps by thread 0)");
}

// The bucketed strategy's launch (agent_bucketed.cuh): per block, its phases up to and past
// the grid barrier; per (item, slice) unit, its count and merge.
inline void PrintBucketedTimeline(const std::string& workload, const histd::cuda::HistogramAccumulateArgs& args,
                                  const histd::cuda::HistogramVariantOptions& o, void* ws,
                                  double launch_ms) {
  namespace hg = histd::cuda::histogram;
  constexpr int kBlock = hg::kBucketBlockStamps, kUnit = hg::kBucketUnitStamps;
  const size_t max_blocks = size_t(histd::cuda::CurrentDeviceSmCountOr()) * 8;
  StampBuffer block_stamps(max_blocks * kBlock);
  StampBuffer unit_stamps(size_t(args.work_count) * hg::kBucketMaxSlices * kUnit);
  RunStamped(args, o, ws, block_stamps, unit_stamps);
  const std::vector<unsigned long long> bs = block_stamps.Read();
  const PhaseSums blocks(bs, kBlock, [](size_t) { return 0; });
  // The grid's spread: blocks' starts, and the last arrival at the barrier against the first
  // block past it (that gap is the barrier's latency, plus planning the units).
  unsigned long long start_lo = ~0ull, start_hi = 0, arrive_hi = 0, pass_lo = ~0ull;
  for (size_t b = 0; b * kBlock < bs.size(); ++b) {
    const unsigned long long* x = &bs[b * kBlock];
    if (x[0] == 0 || x[kBlock - 1] == 0) continue;
    start_lo = std::min(start_lo, x[0]);
    start_hi = std::max(start_hi, x[0]);
    arrive_hi = std::max(arrive_hi, x[2]);
    pass_lo = std::min(pass_lo, x[3]);
  }
  const PhaseSums units(unit_stamps.Read(), kUnit, [](size_t) { return 0; });
  const size_t nb = blocks.Units(), nu = units.Units();
  if (nb == 0) return;
  Table t({"phase (" + workload + ", " + Fmt("%zu blocks, %zu units", nb, nu) + ")", "us (mean)", "share",
           "the slowest block or unit (us)"});
  const char* block_names[kBlock - 1] = {"block: plan the tiles (prefix in shared memory)",
                                         "block: bucket its tiles into records",
                                         "block: plan the units, wait at the grid barrier", "block: fold its units"};
  for (int k = 0; k + 1 < kBlock; ++k)
    t.Add({block_names[k], Fmt("%.2f", blocks.Phase(k) / nb), Fmt("%.1f%%", 100 * blocks.Phase(k) / blocks.Total()),
           Fmt("%.2f", blocks.slowest[k])});
  t.Add({"kernel span (first block start to last block end)", Fmt("%.2f", double(blocks.last - blocks.first) * 1e-3),
         "-", ""});
  t.Add({"blocks' start spread (first to last block start)", Fmt("%.2f", double(start_hi - start_lo) * 1e-3), "-", ""});
  t.Add({"last block's arrival to first block past the barrier", Fmt("%.2f", (double(pass_lo) - double(arrive_hi)) * 1e-3),
         "-", ""});
  const char* unit_names[kUnit - 1] = {"unit: thread 0 reads its records' ends and counts their entries",
                                       "unit: wait for the block's other threads", "unit: merge the slice"};
  for (int k = 0; nu != 0 && k + 1 < kUnit; ++k)
    t.Add({unit_names[k], Fmt("%.2f", units.Phase(k) / nu), Fmt("%.1f%%", 100 * units.Phase(k) / units.Total()),
           Fmt("%.2f", units.slowest[k])});
  t.Add({"launch (median)", Fmt("%.2f", launch_ms * 1e3), "-", ""});
  t.Print("Bucketed launch timeline (one launch; globaltimer stamps by thread 0)");
}

}  // namespace histd::bench
