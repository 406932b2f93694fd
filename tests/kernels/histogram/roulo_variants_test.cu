// Roulo's V0..V6 against their documented soft-cap semantics (roulo_variants.h):
//  - exact (bit for bit) when no bin can cross the cap: start >= cap, or start + hits <= cap;
//  - otherwise, when start + hits <= 255 (so no byte can wrap), the bin lies in
//    [min(cap, start + hits), start + hits].
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "bench/histogram_workloads.cuh"
#include "kernels/common/device_buffer.h"
#include "experiments/histogram/roulo_variants.h"
#include "tests/kernels/histogram/histogram_test_util.h"

namespace histd::testing {
namespace {

using cuda::RouloVariant;

struct Batch {
  uint32_t rows, cols, histograms, n;
  uint8_t cap;
  std::vector<uint32_t> samples;  // histograms * n
  std::vector<uint8_t> start;     // histograms * rows * cols
};

std::vector<uint8_t> RunVariant(RouloVariant v, const Batch& b, uint32_t hint_row) {
  const size_t bins = size_t{b.rows} * b.cols * b.histograms;
  auto d_s = cuda::DeviceBuffer::Allocate(std::max<size_t>(4, b.samples.size() * 4)).value();
  auto d_b = cuda::DeviceBuffer::Allocate(std::max<size_t>(16, (bins + 15) / 16 * 16)).value();  // whole chunks
  EXPECT_EQ(cudaMemset(d_b.get(), 0, d_b.bytes()), cudaSuccess);  // the padding zero (word atomics read it)
  EXPECT_EQ(cudaMemcpy(d_s.get(), b.samples.data(), b.samples.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d_b.get(), b.start.data(), bins, cudaMemcpyHostToDevice), cudaSuccess);
  cuda::RouloBatchArgs a;
  a.samples = d_s.as<uint32_t>();
  a.bins = d_b.as<uint8_t>();
  a.histograms = b.histograms;
  a.samples_per_histogram = b.n;
  a.rows = b.rows;
  a.cols = b.cols;
  a.cap = b.cap;
  a.hint_row = hint_row;
  a.hint_window_cols = 1500;
  const absl::Status st = cuda::RunRouloVariant(v, a, nullptr);
  EXPECT_TRUE(st.ok()) << st;
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint8_t> out(bins);
  EXPECT_EQ(cudaMemcpy(out.data(), d_b.get(), bins, cudaMemcpyDeviceToHost), cudaSuccess);
  return out;
}

std::vector<uint32_t> Hits(const Batch& b) {
  std::vector<uint32_t> hits(size_t{b.rows} * b.cols * b.histograms, 0);
  for (uint32_t h = 0; h < b.histograms; ++h)
    for (uint32_t i = 0; i < b.n; ++i) ++hits[size_t{h} * b.rows * b.cols + b.samples[size_t{h} * b.n + i]];
  return hits;
}

Batch MakeBatch(uint32_t rows, uint32_t cols, uint32_t histograms, uint32_t n, uint8_t cap,
                int kind, uint64_t seed) {
  Batch b{rows, cols, histograms, n, cap, {}, {}};
  b.samples.resize(size_t{histograms} * n);
  const workload::ClusterSpec c{rows * 0.5f, cols * 0.5f, std::max(1.f, rows / 32.f),
                                std::max(1.f, cols / 128.f), 0.1f};
  for (uint32_t h = 0; h < histograms; ++h)
    for (uint32_t i = 0; i < n; ++i)
      b.samples[size_t{h} * n + i] = kind == 0 ? workload::ClusterSample(seed + h, i, rows, cols, c)
                                   : kind == 1 ? workload::UniformSample(seed + h, i, rows * cols)
                                               : (rows * cols - 1) * (i % 2);  // last and first bin
  return b;
}

// Start values chosen so that every bin either starts at/above the cap or cannot reach it.
void ExactStarts(Batch* b, std::mt19937_64& rng) {
  const std::vector<uint32_t> hits = Hits(*b);
  b->start.resize(hits.size());
  for (size_t i = 0; i < hits.size(); ++i) {
    if (hits[i] > b->cap || rng() % 3 == 0) {
      b->start[i] = static_cast<uint8_t>(b->cap + rng() % (256u - b->cap));
    } else {
      b->start[i] = static_cast<uint8_t>(rng() % (b->cap - hits[i] + 1));
    }
  }
}

const char* KindName(int kind) { return kind == 0 ? "clustered" : kind == 1 ? "uniform" : "two bins"; }

TEST(CudaRouloVariants, ExactWhenNoBinCanCrossTheCap) {
  HISTD_REQUIRE_GPU();
  std::mt19937_64 rng(TestSeed());
  const uint32_t shapes[][2] = {{256, 8192}, {37, 101}, {1, 5000}, {5000, 1}};
  const uint32_t counts[] = {0, 1, 12345, 1u << 16};
  for (const auto& s : shapes) {
    for (uint32_t n : counts) {
      for (int kind = 0; kind < 3; ++kind) {
        Batch b = MakeBatch(s[0], s[1], 3, n, static_cast<uint8_t>(kind == 2 ? 255 : 100), kind, rng());
        ExactStarts(&b, rng);
        std::vector<uint8_t> want = b.start;
        for (uint32_t h = 0; h < b.histograms; ++h)
          RefFoldIndices(b.samples.data() + size_t{h} * n, n, want.data() + size_t{h} * s[0] * s[1], b.cap);
        for (int v = 0; v < cuda::kRouloVariantCount; ++v) {
          const std::vector<uint8_t> got = RunVariant(static_cast<RouloVariant>(v), b, s[0] / 2);
          size_t bad = 0;
          for (size_t i = 0; i < want.size(); ++i) bad += want[i] != got[i];
          EXPECT_EQ(bad, 0u) << cuda::RouloVariantName(static_cast<RouloVariant>(v)) << " " << s[0] << "x"
                             << s[1] << " n=" << n << " " << KindName(kind) << " seed " << TestSeed();
        }
      }
    }
  }
}

TEST(CudaRouloVariants, SoftBoundsWhenSaturating) {
  HISTD_REQUIRE_GPU();
  std::mt19937_64 rng(TestSeed() ^ 9);
  for (int kind = 0; kind < 2; ++kind) {
    // Clustered: hits reach ~75 in the core; uniform over a small histogram: ~30 per bin.
    Batch b = kind == 0 ? MakeBatch(256, 8192, 4, 1u << 18, 40, 0, rng())
                        : MakeBatch(64, 1000, 4, 2000000, 40, 1, rng());
    const std::vector<uint32_t> hits = Hits(b);
    b.start.resize(hits.size());
    for (auto& s : b.start) s = static_cast<uint8_t>(rng() % 60);  // some above the cap
    for (int v = 0; v < cuda::kRouloVariantCount; ++v) {
      const std::vector<uint8_t> got = RunVariant(static_cast<RouloVariant>(v), b, b.rows / 2);
      size_t bad = 0, saturated = 0, first = 0;
      for (size_t i = 0; i < hits.size(); ++i) {
        ASSERT_LE(b.start[i] + hits[i], 255u) << "test precondition";
        const uint32_t s = b.start[i], lo = s >= b.cap ? s : std::min<uint32_t>(b.cap, s + hits[i]);
        const uint32_t hi = s >= b.cap ? s : s + hits[i];
        if ((got[i] < lo || got[i] > hi) && bad++ == 0) first = i;
        saturated += s < b.cap && s + hits[i] > b.cap;
      }
      EXPECT_GT(saturated, 1000u);  // the test exercises the cap
      EXPECT_EQ(bad, 0u) << cuda::RouloVariantName(static_cast<RouloVariant>(v)) << " " << KindName(kind)
                         << ": first bad bin " << first << " start " << int(b.start[first]) << " hits "
                         << hits[first] << " got " << int(got[first]) << " seed " << TestSeed();
    }
  }
}

TEST(CudaRouloVariants, RejectsBadArguments) {
  HISTD_REQUIRE_GPU();
  cuda::RouloBatchArgs a;
  EXPECT_EQ(cuda::CheckRouloArgs(a).code(), absl::StatusCode::kInvalidArgument);  // 0 x 0
  a.rows = 65536;
  a.cols = 65536;
  EXPECT_EQ(cuda::CheckRouloArgs(a).code(), absl::StatusCode::kInvalidArgument);  // 2^32 bins
  a.cols = 2;
  a.cap = 0;
  EXPECT_EQ(cuda::CheckRouloArgs(a).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace histd::testing
