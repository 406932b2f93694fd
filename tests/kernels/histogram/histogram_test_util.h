// Shared pieces of the histogram GPU tests: an independent CPU reference (plain loops with
// saturation), and a harness that packs histograms and sample batches into device buffers
// the way the CUDA engine will (any byte offsets, histograms back to back so that words
// straddle neighbours), runs HistogramVariant (HistogramAccumulate itself for the production options), and
// compares bit for bit.
#pragma once

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "experiments/histogram/histogram_variants.h"
#include "experiments/histogram/tuning_candidates.h"
#include "kernels/common/device_buffer.h"
#include "kernels/histogram/histogram_accumulate.h"
#include "kernels/histogram/tuning.h"
#include "model/histogram_types.h"
#include "tests/kernels/gpu_test_util.h"

namespace histd::testing {

// ---------------------------------------------------------------- reference
inline void RefIncrement(uint8_t* bin, uint8_t cap) {
  if (*bin < cap) ++*bin;
}

inline void RefFoldIndices(const uint32_t* idx, size_t n, uint8_t* bins, uint8_t cap) {
  for (size_t i = 0; i < n; ++i) RefIncrement(&bins[idx[i]], cap);
}

inline cuda::HistogramOutflow RefFoldPairs(const float* xy, size_t n, uint8_t* bins, uint32_t rows,
                                           uint32_t cols, uint8_t cap, float x_lo, float x_hi,
                                           float y_lo, float y_hi) {
  const float x_scale = AxisScale(x_lo, x_hi, cols);
  const float y_scale = AxisScale(y_lo, y_hi, rows);
  cuda::HistogramOutflow o{0, 0, 0, 0, 0};
  for (size_t i = 0; i < n; ++i) {
    const int64_t c = AxisBin(xy[2 * i], x_lo, x_hi, x_scale, cols);
    const int64_t r = AxisBin(xy[2 * i + 1], y_lo, y_hi, y_scale, rows);
    o.x_underflow += c == -1;
    o.x_overflow += c == -2;
    o.y_underflow += r == -1;
    o.y_overflow += r == -2;
    if (c < 0 || r < 0) continue;
    ++o.binned;
    RefIncrement(&bins[uint64_t(r) * cols + uint64_t(c)], cap);
  }
  return o;
}

// ---------------------------------------------------------------- harness
struct HostHistogram {
  uint32_t rows = 1, cols = 1;
  uint8_t cap = 255;
  std::vector<uint8_t> bins;  // start values; rows * cols
};

struct HostItem {
  int histogram = 0;
  uint32_t kind = 0;             // 0 indices, 1 pairs
  std::vector<uint32_t> words;   // indices, or float bit patterns x0 y0 x1 y1 ...
  float x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;
  uint64_t count() const { return kind == 0 ? words.size() : words.size() / 2; }
};

inline std::vector<uint32_t> FloatWords(const std::vector<float>& f) {
  std::vector<uint32_t> w(f.size());
  std::memcpy(w.data(), f.data(), f.size() * 4);
  return w;
}

struct HarnessResult {
  std::vector<std::vector<uint8_t>> bins;         // per histogram, after the launch
  std::vector<cuda::HistogramOutflow> outflow;    // per item, minus the seeded start
};

// Packs, runs and downloads. `bins_misalign` offsets the first histogram (0..3 bytes);
// histograms follow each other with no padding (so that words and chunks straddle
// neighbours, which HistogramAccumulate allows; the engine pads instead); `sample_gap` words are inserted before
// each item's samples (odd values misalign 16-byte loads and, for pairs, 8-byte ones).
// With `run_status`, a failed run() is stored there (not a test failure) and the result is
// empty; without it, a failed run() fails the test.
inline HarnessResult RunHarness(const std::vector<HostHistogram>& hists,
                                const std::vector<HostItem>& items,
                                const cuda::HistogramVariantOptions& options,
                                uint32_t bins_misalign = 0, uint32_t sample_gap = 0,
                                absl::Status* run_status = nullptr) {
  HarnessResult out;
  std::vector<uint64_t> hist_off(hists.size());
  uint64_t bin_bytes = bins_misalign;
  for (size_t h = 0; h < hists.size(); ++h) {
    hist_off[h] = bin_bytes;
    bin_bytes += hists[h].bins.size();
  }
  // Guard bytes around the histograms: the allocation ends at the first 16-byte boundary
  // past the last bin (at least one guard byte), so that it holds every chunk that holds a
  // bin and no more: the least the padding contract gives (engine/cuda/
  // cuda_histogram.h), and what compute-sanitizer's memcheck holds the kernels to.
  std::vector<uint8_t> host_bins((bin_bytes + 16) / 16 * 16, 0x5A);
  for (size_t h = 0; h < hists.size(); ++h)
    std::memcpy(host_bins.data() + hist_off[h], hists[h].bins.data(), hists[h].bins.size());
  std::vector<uint32_t> host_samples;
  std::vector<uint64_t> item_off(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    host_samples.insert(host_samples.end(), sample_gap, 0xFFFFFFFFu);  // never a valid index
    item_off[i] = host_samples.size();
    host_samples.insert(host_samples.end(), items[i].words.begin(), items[i].words.end());
  }
  host_samples.push_back(0xFFFFFFFFu);  // never empty
  auto d_bins = cuda::DeviceBuffer::Allocate(host_bins.size()).value();
  auto d_samples = cuda::DeviceBuffer::Allocate(host_samples.size() * 4).value();
  EXPECT_EQ(cudaMemcpy(d_bins.get(), host_bins.data(), host_bins.size(), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d_samples.get(), host_samples.data(), host_samples.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  std::vector<cuda::HistogramWork> work(items.size());
  uint64_t total = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    const HostItem& it = items[i];
    const HostHistogram& h = hists[it.histogram];
    work[i] = cuda::HistogramWork{d_bins.as<uint8_t>() + hist_off[it.histogram], h.rows, h.cols, h.cap,
                                  it.kind, item_off[i], it.count(), it.x_lo, it.x_hi, it.y_lo, it.y_hi};
    total += it.count();
  }
  // Outflow starts at known non-zero values: run() must add, not store.
  std::vector<cuda::HistogramOutflow> seeded(items.size());
  for (size_t i = 0; i < items.size(); ++i) seeded[i] = {1000 + i, 7, 11, 13, 17};
  auto d_work = cuda::DeviceBuffer::Allocate(std::max<size_t>(1, work.size()) * sizeof(cuda::HistogramWork)).value();
  auto d_out = cuda::DeviceBuffer::Allocate(std::max<size_t>(1, items.size()) * sizeof(cuda::HistogramOutflow)).value();
  if (!work.empty()) {
    EXPECT_EQ(cudaMemcpy(d_work.get(), work.data(), work.size() * sizeof(work[0]), cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(d_out.get(), seeded.data(), seeded.size() * sizeof(seeded[0]), cudaMemcpyHostToDevice), cudaSuccess);
  }
  cuda::HistogramAccumulateArgs args;
  args.work = work.empty() ? nullptr : d_work.as<cuda::HistogramWork>();
  args.host_work = work.empty() ? nullptr : work.data();  // as the engine passes it
  args.work_count = static_cast<int>(work.size());
  args.samples = d_samples.as<uint32_t>();
  args.outflow = work.empty() ? nullptr : d_out.as<cuda::HistogramOutflow>();
  args.total_samples = total;
  using cuda::HistogramVariant;
  EXPECT_TRUE(HistogramVariant::can_implement(args, options).ok());
  const size_t ws_bytes = HistogramVariant::get_workspace_size(args, options);
  auto ws = cuda::DeviceBuffer::Allocate(ws_bytes).value();
  if (ws_bytes) PoisonDevice(ws.get(), ws_bytes);
  const absl::Status st = HistogramVariant::run(args, options, ws.get(), nullptr);
  if (run_status != nullptr) {
    *run_status = st;
    if (!st.ok()) {
      (void)cudaGetLastError();  // a failed launch must not be reported by the next one
      return out;
    }
  }
  EXPECT_TRUE(st.ok()) << st;
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint8_t> after(host_bins.size());
  EXPECT_EQ(cudaMemcpy(after.data(), d_bins.get(), after.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  // Guard bytes (before the first and after the last histogram) must be untouched.
  for (uint32_t g = 0; g < bins_misalign; ++g) EXPECT_EQ(after[g], 0x5A) << "guard byte " << g;
  for (uint64_t g = bin_bytes; g < after.size(); ++g) EXPECT_EQ(after[g], 0x5A) << "guard byte " << g;
  for (size_t h = 0; h < hists.size(); ++h)
    out.bins.emplace_back(after.begin() + hist_off[h], after.begin() + hist_off[h] + hists[h].bins.size());
  out.outflow.resize(items.size());
  if (!items.empty()) {
    EXPECT_EQ(cudaMemcpy(out.outflow.data(), d_out.get(), items.size() * sizeof(seeded[0]), cudaMemcpyDeviceToHost), cudaSuccess);
    for (size_t i = 0; i < items.size(); ++i) {
      out.outflow[i].binned -= seeded[i].binned;
      out.outflow[i].x_underflow -= seeded[i].x_underflow;
      out.outflow[i].x_overflow -= seeded[i].x_overflow;
      out.outflow[i].y_underflow -= seeded[i].y_underflow;
      out.outflow[i].y_overflow -= seeded[i].y_overflow;
    }
  }
  return out;
}

// The reference for a whole harness case.
inline HarnessResult RunReference(const std::vector<HostHistogram>& hists,
                                  const std::vector<HostItem>& items) {
  HarnessResult out;
  for (const auto& h : hists) out.bins.push_back(h.bins);
  for (const auto& it : items) {
    const HostHistogram& h = hists[it.histogram];
    uint8_t* bins = out.bins[it.histogram].data();
    if (it.kind == 0) {
      RefFoldIndices(it.words.data(), it.words.size(), bins, h.cap);
      out.outflow.push_back({it.words.size(), 0, 0, 0, 0});
    } else {
      std::vector<float> f(it.words.size());
      std::memcpy(f.data(), it.words.data(), f.size() * 4);
      out.outflow.push_back(RefFoldPairs(f.data(), f.size() / 2, bins, h.rows, h.cols, h.cap,
                                         it.x_lo, it.x_hi, it.y_lo, it.y_hi));
    }
  }
  return out;
}

// Bit-for-bit comparison with a readable first mismatch.
inline void ExpectSameResult(const HarnessResult& want, const HarnessResult& got,
                             const std::string& what) {
  ASSERT_EQ(want.bins.size(), got.bins.size()) << what;
  for (size_t h = 0; h < want.bins.size(); ++h) {
    ASSERT_EQ(want.bins[h].size(), got.bins[h].size()) << what;
    size_t bad = 0, first = 0;
    for (size_t b = 0; b < want.bins[h].size(); ++b)
      if (want.bins[h][b] != got.bins[h][b] && bad++ == 0) first = b;
    EXPECT_EQ(bad, 0u) << what << ": histogram " << h << " has " << bad
                       << " wrong bins; first at " << first << " want "
                       << int(want.bins[h][first]) << " got " << int(got.bins[h][first]);
  }
  ASSERT_EQ(want.outflow.size(), got.outflow.size()) << what;
  for (size_t i = 0; i < want.outflow.size(); ++i) {
    const auto &w = want.outflow[i], &g = got.outflow[i];
    EXPECT_TRUE(w.binned == g.binned && w.x_underflow == g.x_underflow && w.x_overflow == g.x_overflow &&
                w.y_underflow == g.y_underflow && w.y_overflow == g.y_overflow)
        << what << ": outflow of item " << i << " want {" << w.binned << "," << w.x_underflow << ","
        << w.x_overflow << "," << w.y_underflow << "," << w.y_overflow << "} got {" << g.binned << ","
        << g.x_underflow << "," << g.x_overflow << "," << g.y_underflow << "," << g.y_overflow << "}";
  }
}

// The option sets every exact test sweeps: production default, each config (clustered
// ones included), the window-less and bucketed strategies, misses guessing 0 first, and windows clamped
// small so that misses and window edges abound (one of them clustered, with many tiles).
inline std::vector<std::pair<std::string, cuda::HistogramVariantOptions>> ExactOptionSweep() {
  std::vector<std::pair<std::string, cuda::HistogramVariantOptions>> v;
  v.push_back({"default", {}});
  for (int c = 0; c < cuda::histogram::kHotWindowCandidateCount; ++c) {
    cuda::HistogramVariantOptions o;
    o.strategy = cuda::HistogramStrategy::kHotWindow;
    o.config = c;
    v.push_back({"config" + std::to_string(c), o});
  }
  cuda::HistogramVariantOptions g;
  g.strategy = cuda::HistogramStrategy::kGlobalOnly;
  v.push_back({"global_only", g});
  cuda::HistogramVariantOptions b;
  b.strategy = cuda::HistogramStrategy::kBucketed;
  v.push_back({"bucketed", b});  // up to kBucketInlineItems items: the work list by value
  b.work_by_value = false;
  v.push_back({"bucketed_work_in_device_memory", b});
  b.work_by_value = true;
  b.interleave_slices = false;
  v.push_back({"bucketed_contiguous_slices", b});
  b.interleave_slices = true;
  b.bucket_slice_bins = 8192;  // half-size slices wherever they apply (<= 32 items, <= 2M bins)
  v.push_back({"bucketed_8k_slices", b});
  b.interleave_slices = false;
  v.push_back({"bucketed_8k_contiguous_slices", b});
  // Every set below asks for the window explicitly: kAuto takes the bucketed strategy for
  // launches as small as most tests make.
  cuda::HistogramVariantOptions z;
  z.strategy = cuda::HistogramStrategy::kHotWindow;
  z.miss_guess = 1;
  z.max_window_bins = 4096;
  v.push_back({"guess_zero_window4096", z});
  for (uint32_t w : {1u, 77u, 4096u}) {
    cuda::HistogramVariantOptions o;
    o.strategy = cuda::HistogramStrategy::kHotWindow;
    o.max_window_bins = w;
    o.tile_samples = 1024;
    v.push_back({"window" + std::to_string(w) + "_tile1024", o});
  }
  for (int c = 0; c < cuda::histogram::kHotWindowCandidateCount; ++c) {
    if (!cuda::histogram::kHotWindowCandidates[c].defer_misses) continue;
    for (uint32_t w : {77u, 4096u}) {  // many misses, many small records, small tiles
      cuda::HistogramVariantOptions o;
      o.strategy = cuda::HistogramStrategy::kHotWindow;
      o.config = c;
      o.max_window_bins = w;
      o.tile_samples = 1024;
      v.push_back({"deferred_config" + std::to_string(c) + "_window" + std::to_string(w) + "_tile1024", o});
    }
    cuda::HistogramVariantOptions g;
    g.strategy = cuda::HistogramStrategy::kGlobalOnly;  // every sample deferred
    g.config = c;
    v.push_back({"deferred_config" + std::to_string(c) + "_no_window", g});
  }
  cuda::HistogramVariantOptions sparse;  // every tile defers, however few its misses
  sparse.strategy = cuda::HistogramStrategy::kHotWindow;
  sparse.max_window_bins = 4096;
  sparse.defer_bins_per_miss = 1u << 24;
  v.push_back({"default_window4096_sparse_misses_deferred", sparse});
  cuda::HistogramVariantOptions cl;
  cl.strategy = cuda::HistogramStrategy::kHotWindow;
  cl.config = 4;  // clustered windows (cluster of 8)
  cl.max_window_bins = 77;
  cl.tile_samples = 1024;
  cl.miss_guess = 1;
  v.push_back({"last_config_window77_tile1024_guess", cl});
  // $HISTD_GPU_TEST_SWEEP=lean (compute-sanitizer's racecheck: tests/kernels/run_compute_sanitizer.sh):
  // every kernel once and each deferral and bucketing path, about half the sets.
  if (LeanSweep()) {
    std::vector<std::pair<std::string, cuda::HistogramVariantOptions>> lean;
    for (auto& o : v) {
      const std::string& n = o.first;
      if (n.rfind("config", 0) == 0 || n == "global_only" || n == "bucketed" || n == "bucketed_contiguous_slices" ||
          n == "deferred_config5_window77_tile1024" || n == "deferred_config6_no_window" ||
          n == "default_window4096_sparse_misses_deferred" || n == "last_config_window77_tile1024_guess")
        lean.push_back(std::move(o));
    }
    return lean;
  }
  return v;
}

inline uint64_t TestSeed() {
  static const uint64_t seed = std::random_device{}();
  return seed;
}

}  // namespace histd::testing
