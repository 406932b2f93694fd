// Where one launch of the hot-window kernel spends its time, tile by tile: the kernel's
// thread 0 of each block stamps %globaltimer at the phase boundaries of every tile
// (HistogramAccumulateOptions::bench_timeline, kTimelineStamps in tile_view.cuh), and so
// does the deferred fold per (item, range) unit (bench_fold_timeline, deferred_misses.cuh);
// this prints the mean of each phase over the launch's tiles and units, and their spans.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "bench/bench_util.cuh"
#include "kernels/cuda/histogram/deferred_misses.cuh"
#include "kernels/cuda/histogram/histogram_accumulate.h"
#include "kernels/cuda/histogram/tile_view.cuh"

namespace histd::bench {

// args: the launch as timed (its workspace `ws` already sized); launch_ms: its median time.
inline void PrintTileTimeline(const std::string& workload, histd::cuda::HistogramAccumulateArgs args, void* ws,
                              double launch_ms) {
  namespace hg = histd::cuda::histogram;
  constexpr int kStamps = hg::kTimelineStamps;
  histd::cuda::HistogramAccumulate op;
  uint32_t tiles = 0;
  unsigned long long* d_stamps;
  const size_t cap_tiles = args.total_samples / 1024 + size_t(args.work_count) + 1;
  BENCH_CUDA(cudaMalloc(&d_stamps, cap_tiles * kStamps * sizeof(unsigned long long)));
  BENCH_CUDA(cudaMemset(d_stamps, 0, cap_tiles * kStamps * sizeof(unsigned long long)));
  args.options.bench_timeline = d_stamps;
  constexpr int kFold = hg::kFoldTimelineStamps;
  const size_t cap_units = size_t(args.work_count) * hg::kDeferMaxRanges;
  unsigned long long* d_fold;
  BENCH_CUDA(cudaMalloc(&d_fold, cap_units * kFold * sizeof(unsigned long long)));
  BENCH_CUDA(cudaMemset(d_fold, 0, cap_units * kFold * sizeof(unsigned long long)));
  args.options.bench_fold_timeline = d_fold;
  BENCH_OK(op.run(args, ws, nullptr));
  BENCH_CUDA(cudaDeviceSynchronize());
  // The plan's tile count: tile_start[work_count], the workspace's first array.
  BENCH_CUDA(cudaMemcpy(&tiles, static_cast<uint32_t*>(ws) + args.work_count, 4, cudaMemcpyDeviceToHost));
  std::vector<unsigned long long> st(size_t(tiles) * kStamps);
  BENCH_CUDA(cudaMemcpy(st.data(), d_stamps, st.size() * sizeof(st[0]), cudaMemcpyDeviceToHost));
  BENCH_CUDA(cudaFree(d_stamps));
  const char* names[kStamps - 1] = {"find the tile's item", "choose its window (probe)", "clear the window's lanes",
                                    "stream and fold (block thread 0's loop)", "wait for the block, drain queues",
                                    "merge the window into the bins", "outflow, barrier"};
  // A block's first tile (tiles are dealt round-robin to one block per SM) against its later
  // ones: the first pays cold instruction caches and every block starting at once.
  int device = 0, sms = 0;
  BENCH_CUDA(cudaGetDevice(&device));
  BENCH_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const uint32_t blocks = std::min<uint32_t>(tiles, uint32_t(sms));
  double sum[2][kStamps - 1] = {};
  unsigned long long first = ~0ull, last = 0;
  for (uint32_t t = 0; t < tiles; ++t) {
    const unsigned long long* s = &st[size_t(t) * kStamps];
    for (int k = 0; k + 1 < kStamps; ++k) sum[t < blocks ? 0 : 1][k] += double(s[k + 1] - s[k]) * 1e-3;
    first = std::min(first, s[0]);
    last = std::max(last, s[kStamps - 1]);
  }
  const uint32_t n[2] = {blocks, tiles - blocks};
  double tile_total = 0;
  for (int k = 0; k + 1 < kStamps; ++k) tile_total += sum[0][k] + sum[1][k];
  auto mean = [&](int g, int k) { return n[g] == 0 ? std::string("-") : Fmt("%.2f", sum[g][k] / n[g]); };
  Table t({"phase of a tile (" + workload + ", " + Fmt("%u", tiles) + " tiles)", "us per tile",
           "a block's first tile", "later tiles", "share"});
  for (int k = 0; k + 1 < kStamps; ++k)
    t.Add({names[k], Fmt("%.2f", (sum[0][k] + sum[1][k]) / tiles), mean(0, k), mean(1, k),
           Fmt("%.1f%%", 100 * (sum[0][k] + sum[1][k]) / tile_total)});
  t.Add({"whole tile", Fmt("%.2f", tile_total / tiles), "", "", "100%"});
  t.Add({"first kernel's span (first tile start to last tile end)", Fmt("%.2f", double(last - first) * 1e-3), "", "", "-"});
  // The deferred fold: units that merged a range (units with no record stop after stamp 1).
  std::vector<unsigned long long> fs(cap_units * kFold);
  BENCH_CUDA(cudaMemcpy(fs.data(), d_fold, fs.size() * sizeof(fs[0]), cudaMemcpyDeviceToHost));
  BENCH_CUDA(cudaFree(d_fold));
  const char* fold_names[kFold - 1] = {"find the unit's item", "set the unit up (barrier)",
                                       "read the records, count the entries, take the range's lock",
                                       "merge the range into the bins (zeroing the lanes read)",
                                       "release the lock"};
  double fsum[kFold - 1] = {};
  unsigned long long ffirst = ~0ull, flast = 0;
  size_t units = 0;
  for (size_t u = 0; u < cap_units; ++u) {
    const unsigned long long* f = &fs[u * kFold];
    if (f[0] == 0 || f[kFold - 1] == 0) continue;
    ++units;
    for (int k = 0; k + 1 < kFold; ++k) fsum[k] += double(f[k + 1] - f[k]) * 1e-3;
    ffirst = std::min(ffirst, f[0]);
    flast = std::max(flast, f[kFold - 1]);
  }
  if (units != 0) {
    double unit_total = 0;
    for (double x : fsum) unit_total += x;
    t.Add({Fmt("second kernel: %zu (item, range) units", units), "us per unit", "", "", "share"});
    for (int k = 0; k + 1 < kFold; ++k)
      t.Add({fold_names[k], Fmt("%.2f", fsum[k] / units), "", "", Fmt("%.1f%%", 100 * fsum[k] / unit_total)});
    t.Add({"whole unit", Fmt("%.2f", unit_total / units), "", "", "100%"});
    t.Add({"second kernel's span (first unit start to last unit end)", Fmt("%.2f", double(flast - ffirst) * 1e-3), "",
           "", "-"});
    t.Add({"gap from the first kernel's last tile to the second's first unit",
           Fmt("%.2f", (double(ffirst) - double(last)) * 1e-3), "", "", "-"});
  }
  t.Add({"launch (median, all kernels)", Fmt("%.2f", launch_ms * 1e3), "", "", "-"});
  t.Print("Hot-window tile timeline (one launch; globaltimer stamps by thread 0)");
}

}  // namespace histd::bench
