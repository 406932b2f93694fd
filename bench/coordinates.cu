// Benchmark of coordinate binning in the production histogram kernel: the same samples fed
// as flattened bin indices and as float32 (x, y) pairs binned on the device with the exact
// axis rule (model/axis_binning.h), in one process on the same buffers.
//
//   roulo    64 histograms of 256 x 8192 bins, 2^20 clustered samples each (Roulo's eye)
//   uniform  the same, every bin equally likely
//   edges    the same shape, every coordinate the float32 nearest a bin edge: every sample
//            takes the exact edge test (the adversarial case; indices: uniform)
//   message  one launch of 8 messages of 2^17 samples (1 MiB of pairs), one histogram
//            each, clustered: the daemon's batches
// Axes: x over the columns [-1.3, 2.7), y over the rows [0.1, 0.7) (inexact widths).
// Pairs sit inside their bins (roulo, uniform, message), so both forms must give the same
// bins: "matches" compares the pair histograms with the index histograms, and the edge
// workload with a host loop over AxisBin (itself checked against rational arithmetic by
// tests/model/axis_binning_test.cc). Bins are reset (untimed) before every repetition;
// medians of 9. Floor: samples read plus bins written at the device copy bandwidth.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/bench_util.cuh"
#include "bench/histogram_workloads.cuh"
#include "model/axis_binning.h"
#include "kernels/histogram/histogram_accumulate.h"

namespace hb = histd::bench;
namespace hc = histd::cuda;
namespace wl = histd::workload;

namespace {

constexpr uint32_t kRows = 256, kCols = 8192;
constexpr float kXLo = -1.3f, kXHi = 2.7f, kYLo = 0.1f, kYHi = 0.7f;

enum class Kind { kCluster, kUniform, kEdges };

// Sample i of item `item` as a flat index and as a pair inside (or, kEdges, on an edge of)
// that index's bin.
__global__ void GenerateKernel(uint32_t* indices, float* pairs, uint64_t per_item, int items,
                               Kind kind) {
  const uint64_t total = per_item * items;
  for (uint64_t g = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; g < total;
       g += uint64_t(gridDim.x) * blockDim.x) {
    const uint64_t item = g / per_item, i = g % per_item;
    const uint64_t seed = 1000 + item;
    uint32_t idx = kind == Kind::kCluster
                       ? wl::ClusterSample(seed, i, kRows, kCols, wl::RouloCluster(kRows, kCols))
                       : wl::UniformSample(seed, i, kRows * kCols);
    indices[g] = idx;
    const uint32_t row = idx / kCols, col = idx % kCols;
    const uint64_t h = wl::Mix64(seed * 31 + i);
    // Inside the bin: a quarter to three quarters of its width; on the edge: offset 0.
    const double u = kind == Kind::kEdges ? 0.0 : 0.25 + 0.5 * double(h & 0xffff) / 65536.0;
    const double v = kind == Kind::kEdges ? 0.0 : 0.25 + 0.5 * double((h >> 16) & 0xffff) / 65536.0;
    pairs[2 * g] = float(double(kXLo) + (col + u) * (double(kXHi) - double(kXLo)) / kCols);
    pairs[2 * g + 1] = float(double(kYLo) + (row + v) * (double(kYHi) - double(kYLo)) / kRows);
  }
}

struct Workload {
  std::string name;
  Kind kind;
  int items;
  uint64_t per_item;
  bool per_launch;  // report per launch (message) instead of per histogram
};

struct Measured {
  double ms;
  std::vector<uint8_t> bins;
  std::vector<hc::HistogramOutflow> outflow;
};

// Times the production default on `work` (kind 0 over indices, or kind 1 over pairs).
Measured RunProduction(std::vector<hc::HistogramWork> work, const void* samples, uint8_t* d_bins,
                       uint64_t bins_bytes, uint64_t total) {
  hc::HistogramWork* d_work;
  hc::HistogramOutflow* d_out;
  BENCH_CUDA(cudaMalloc(&d_work, work.size() * sizeof(work[0])));
  BENCH_CUDA(cudaMalloc(&d_out, work.size() * sizeof(hc::HistogramOutflow)));
  BENCH_CUDA(cudaMemcpy(d_work, work.data(), work.size() * sizeof(work[0]), cudaMemcpyHostToDevice));
  hc::HistogramAccumulateArgs args;
  args.work = d_work;
  args.host_work = work.data();
  args.work_count = int(work.size());
  args.samples = static_cast<const uint32_t*>(samples);
  args.outflow = d_out;
  args.total_samples = total;
  using hc::HistogramAccumulate;
  BENCH_OK(HistogramAccumulate::can_implement(args));
  void* ws;
  BENCH_CUDA(cudaMalloc(&ws, std::max<size_t>(256, HistogramAccumulate::get_workspace_size(args))));
  auto reset = [&] {
    BENCH_CUDA(cudaMemsetAsync(d_bins, 0, bins_bytes));
    BENCH_CUDA(cudaMemsetAsync(d_out, 0, work.size() * sizeof(hc::HistogramOutflow)));
  };
  reset();
  BENCH_OK(HistogramAccumulate::run(args, ws, nullptr));  // warm-up
  cudaEvent_t a, b;
  BENCH_CUDA(cudaEventCreate(&a));
  BENCH_CUDA(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int r = 0; r < 9; ++r) {
    reset();
    BENCH_CUDA(cudaEventRecord(a));
    BENCH_OK(HistogramAccumulate::run(args, ws, nullptr));
    BENCH_CUDA(cudaEventRecord(b));
    BENCH_CUDA(cudaEventSynchronize(b));
    float t;
    BENCH_CUDA(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  Measured m{ms[ms.size() / 2], std::vector<uint8_t>(bins_bytes), std::vector<hc::HistogramOutflow>(work.size())};
  BENCH_CUDA(cudaMemcpy(m.bins.data(), d_bins, bins_bytes, cudaMemcpyDeviceToHost));
  BENCH_CUDA(cudaMemcpy(m.outflow.data(), d_out, work.size() * sizeof(hc::HistogramOutflow), cudaMemcpyDeviceToHost));
  BENCH_CUDA(cudaEventDestroy(a));
  BENCH_CUDA(cudaEventDestroy(b));
  BENCH_CUDA(cudaFree(ws));
  BENCH_CUDA(cudaFree(d_work));
  BENCH_CUDA(cudaFree(d_out));
  return m;
}

// The host reference for pairs: AxisBin per coordinate, saturating at 255.
std::vector<uint8_t> ReferencePairs(const std::vector<float>& pairs, int items, uint64_t per_item) {
  std::vector<uint8_t> bins(uint64_t(items) * kRows * kCols, 0);
  const float sx = histd::AxisScale(kXLo, kXHi, kCols), sy = histd::AxisScale(kYLo, kYHi, kRows);
  for (int it = 0; it < items; ++it) {
    uint8_t* h = bins.data() + uint64_t(it) * kRows * kCols;
    for (uint64_t i = 0; i < per_item; ++i) {
      const uint64_t g = uint64_t(it) * per_item + i;
      const int64_t c = histd::AxisBin(pairs[2 * g], kXLo, kXHi, sx, kCols);
      const int64_t r = histd::AxisBin(pairs[2 * g + 1], kYLo, kYHi, sy, kRows);
      if (c < 0 || r < 0) continue;
      uint8_t& bin = h[uint64_t(r) * kCols + uint64_t(c)];
      if (bin < 255) ++bin;
    }
  }
  return bins;
}

void Run(const Workload& w, double copy_gbs, hb::Table& table) {
  const uint64_t total = w.per_item * w.items;
  const uint64_t bins_bytes = uint64_t(w.items) * kRows * kCols;
  uint32_t* d_indices;
  float* d_pairs;
  uint8_t* d_bins;
  BENCH_CUDA(cudaMalloc(&d_indices, total * 4));
  BENCH_CUDA(cudaMalloc(&d_pairs, total * 8));
  BENCH_CUDA(cudaMalloc(&d_bins, bins_bytes));
  GenerateKernel<<<4096, 256>>>(d_indices, d_pairs, w.per_item, w.items, w.kind);
  BENCH_CUDA(cudaDeviceSynchronize());
  std::vector<hc::HistogramWork> index_work, pair_work;
  for (int it = 0; it < w.items; ++it) {
    uint8_t* bins = d_bins + uint64_t(it) * kRows * kCols;
    index_work.push_back({bins, kRows, kCols, 255, 0, uint64_t(it) * w.per_item, w.per_item, 0, 0, 0, 0});
    pair_work.push_back({bins, kRows, kCols, 255, 1, 2 * uint64_t(it) * w.per_item, w.per_item, kXLo, kXHi,
                         kYLo, kYHi});
  }
  const Measured indices = RunProduction(index_work, d_indices, d_bins, bins_bytes, total);
  const Measured pairs = RunProduction(pair_work, d_pairs, d_bins, bins_bytes, total);
  bool matches;
  if (w.kind == Kind::kEdges) {
    std::vector<float> host(total * 2);
    BENCH_CUDA(cudaMemcpy(host.data(), d_pairs, total * 8, cudaMemcpyDeviceToHost));
    matches = pairs.bins == ReferencePairs(host, w.items, w.per_item);
  } else {
    matches = pairs.bins == indices.bins;
    for (const auto& o : pairs.outflow) matches = matches && o.binned == w.per_item;
  }
  const double units = w.per_launch ? 1.0 : w.items;
  auto add = [&](const char* form, const Measured& m, uint64_t sample_bytes) {
    const double us = m.ms * 1e3 / units;
    const double floor_us = (total * sample_bytes + bins_bytes) / (copy_gbs * 1e3) / units;
    table.Add({w.name, form, hb::Fmt("%.2f", us), hb::Fmt("%.1f", total / (m.ms * 1e6)),
               hb::Fmt("%.2f", us / floor_us), hb::Fmt("%.2f", m.ms / indices.ms),
               &m == &pairs ? (matches ? "yes" : "NO") : "-"});
  };
  add("indices (u32)", indices, 4);
  add("pairs (f32 x, y), exact binning", pairs, 8);
  BENCH_CUDA(cudaFree(d_indices));
  BENCH_CUDA(cudaFree(d_pairs));
  BENCH_CUDA(cudaFree(d_bins));
}

}  // namespace

int main() {
  BENCH_CUDA(cudaFree(nullptr));
  const double copy_gbs = hb::CopyBandwidthGBs();
  std::printf("# Coordinate binning in the production histogram kernel\n\n%s; device copy %.0f GB/s "
              "(read + write)\n",
              hb::DeviceLine().c_str(), copy_gbs);
  hb::Table table({"workload", "samples as", "us per histogram (message: per launch)", "G samples/s",
                   "ratio to floor", "time vs indices", "matches"});
  const Workload workloads[] = {
      {"roulo: 64 x 2^20 clustered", Kind::kCluster, 64, uint64_t{1} << 20, false},
      {"uniform: 64 x 2^20", Kind::kUniform, 64, uint64_t{1} << 20, false},
      {"edges: 64 x 2^20, every pair on a bin edge", Kind::kEdges, 64, uint64_t{1} << 20, false},
      {"message: 8 x 1 MiB, clustered, one launch", Kind::kCluster, 8, uint64_t{1} << 17, true},
  };
  for (const Workload& w : workloads) Run(w, copy_gbs, table);
  table.Print("256 x 8192 bins, x over [-1.3, 2.7), y over [0.1, 0.7); production default strategy");
  return 0;
}
