// ReadBins (regions, rebinning with partial blocks, transpose), Summarize, Merge and Reset
// against tests/engine/reference.h. Runs on every engine.
#include <cstdint>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "engine/engine.h"
#include "tests/engine/engine_test_util.h"
#include "tests/engine/reference.h"
#include "tests/lean_sweep.h"

namespace histd {
namespace {

using testing::FillHistogram;
using testing::NewHistogram;
using testing::RandomBins;
using testing::ReadAll;
using testing::Spec;

class ReadTest : public testing::EngineTest {
 protected:
  // A histogram with random bins (some at cap, some 0); returns the bins.
  std::unique_ptr<HistogramStorage> Random(std::mt19937_64& rng, uint32_t rows, uint32_t cols,
                                           uint8_t cap, std::vector<uint8_t>* bins) {
    auto h = NewHistogram(engine(), rows, cols, cap);
    if (h == nullptr) return nullptr;
    *bins = RandomBins(rng, uint64_t{rows} * cols, cap);
    FillHistogram(engine(), *h, *bins, rng);
    return h;
  }

  // ReadBins(spec) compared with the reference, for either output type.
  void ExpectRead(const HistogramStorage& h, const std::vector<uint8_t>& bins,
                  const ReadSpec& spec) {
    SCOPED_TRACE(::testing::Message()
                 << "region rows [" << spec.region.row_begin << ", " << spec.region.row_end
                 << ") cols [" << spec.region.col_begin << ", " << spec.region.col_end
                 << ") factors " << spec.row_factor << " x " << spec.col_factor << " out "
                 << spec.out_rows << " x " << spec.out_cols
                 << (spec.pool == PoolOp::kMax ? " max" : " sum")
                 << (spec.transpose ? " transposed" : ""));
    const uint64_t bytes = ReadBinsBytes(spec);
    // One guard byte past the end catches writes out of bounds.
    std::vector<uint8_t> out(bytes + 1, 0xCD);
    absl::Status s = engine().ReadBins(h, spec, out.data());
    ASSERT_TRUE(s.ok()) << s;
    EXPECT_EQ(out[bytes], 0xCD) << "wrote past the end";
    const std::vector<uint32_t> expected = ref::ReadBins(bins, h.shape(), spec);
    ASSERT_EQ(expected.size(), ReadBinsRows(spec) * ReadBinsCols(spec));
    std::vector<uint32_t> got(expected.size());
    for (size_t i = 0; i < got.size(); ++i) {
      if (ReadBinsType(spec) == DType::kU8) {
        got[i] = out[i];
      } else {
        std::memcpy(&got[i], out.data() + 4 * i, 4);
      }
    }
    EXPECT_EQ(got, expected);
  }
};
HISTD_INSTANTIATE_ENGINE_TEST(ReadTest);

// A pooled view: the region cut into exactly out_rows x out_cols blocks.
ReadSpec View(uint32_t r0, uint32_t r1, uint32_t c0, uint32_t c1, uint32_t out_rows,
              uint32_t out_cols, PoolOp pool, bool transpose) {
  ReadSpec spec = Spec(r0, r1, c0, c1, 1, 1, transpose);
  spec.out_rows = out_rows;
  spec.out_cols = out_cols;
  spec.pool = pool;
  return spec;
}

TEST_P(ReadTest, WholeHistogramAsStoredAndTransposed) {
  HISTD_SEEDED_RNG(rng);
  for (auto [rows, cols] : {std::pair<uint32_t, uint32_t>{1, 1}, {1, 1000}, {1000, 1},
                            {37, 53}, {129, 65}}) {
    std::vector<uint8_t> bins;
    auto h = Random(rng, rows, cols, 255, &bins);
    ASSERT_NE(h, nullptr);
    EXPECT_EQ(ReadAll(engine(), *h), bins);
    ExpectRead(*h, bins, Spec(0, rows, 0, cols, 1, 1, false));
    ExpectRead(*h, bins, Spec(0, rows, 0, cols, 1, 1, true));
  }
}

TEST_P(ReadTest, RandomRegionsFactorsAndTranspose) {
  HISTD_SEEDED_RNG(rng);
  std::vector<uint8_t> bins;
  const uint32_t rows = 97, cols = 301;
  auto h = Random(rng, rows, cols, 200, &bins);
  ASSERT_NE(h, nullptr);
  for (int trial = 0; trial < 200; ++trial) {
    const uint32_t r0 = rng() % rows, c0 = rng() % cols;
    const uint32_t r1 = r0 + 1 + rng() % (rows - r0), c1 = c0 + 1 + rng() % (cols - c0);
    const uint32_t rf = trial % 4 == 0 ? 1 : 1 + rng() % 9;
    const uint32_t cf = trial % 3 == 0 ? 1 : 1 + rng() % 13;
    ExpectRead(*h, bins, Spec(r0, r1, c0, c1, rf, cf, rng() % 2 == 1));
  }
}

TEST_P(ReadTest, EdgeRegionsAndBlocks) {
  HISTD_SEEDED_RNG(rng);
  std::vector<uint8_t> bins;
  const uint32_t rows = 33, cols = 31;
  auto h = Random(rng, rows, cols, 255, &bins);
  ASSERT_NE(h, nullptr);
  for (bool t : {false, true}) {
    ExpectRead(*h, bins, Spec(rows - 1, rows, cols - 1, cols, 1, 1, t));    // the last bin
    ExpectRead(*h, bins, Spec(rows - 1, rows, 0, cols, 1, 1, t));           // last row, 1 x N
    ExpectRead(*h, bins, Spec(0, rows, cols - 1, cols, 1, 1, t));           // last col, N x 1
    ExpectRead(*h, bins, Spec(0, rows, 0, cols, rows, cols, t));            // one block
    ExpectRead(*h, bins, Spec(0, rows, 0, cols, 1000, 1000, t));            // factor > region
    ExpectRead(*h, bins, Spec(0, rows, 0, cols, 2, 2, t));                  // partial last blocks
    ExpectRead(*h, bins, Spec(1, rows, 1, cols, 32, 30, t));                // exact blocks
    ExpectRead(*h, bins, Spec(0, rows, 0, cols, 1, 7, t));                  // columns only
    ExpectRead(*h, bins, Spec(0, rows, 0, cols, 5, 1, t));                  // rows only
  }
}

TEST_P(ReadTest, RebinningSaturatedBinsSumsBeyondOneByte) {
  auto h = NewHistogram(engine(), 64, 64, 255);
  ASSERT_NE(h, nullptr);
  std::mt19937_64 rng(1);
  FillHistogram(engine(), *h, std::vector<uint8_t>(64 * 64, 255), rng);
  std::vector<uint32_t> out(1);
  ASSERT_TRUE(engine().ReadBins(*h, Spec(0, 64, 0, 64, 64, 64, false), out.data()).ok());
  EXPECT_EQ(out[0], 64u * 64u * 255u);
}

TEST_P(ReadTest, PooledViewsOfRandomRegionsSizesAndPools) {
  HISTD_SEEDED_RNG(rng);
  std::vector<uint8_t> bins;
  const uint32_t rows = 97, cols = 301;
  auto h = Random(rng, rows, cols, 200, &bins);
  ASSERT_NE(h, nullptr);
  for (int trial = 0; trial < 200; ++trial) {
    const uint32_t r0 = rng() % rows, c0 = rng() % cols;
    const uint32_t r1 = r0 + 1 + rng() % (rows - r0), c1 = c0 + 1 + rng() % (cols - c0);
    // Sizes 1, the whole extent, and anything between (mostly non-integer ratios); an out
    // size of 0 cuts that dimension by factor (1 or random).
    const uint32_t out_rows = trial % 7 == 0 ? 0 : trial % 5 == 0 ? r1 - r0 : 1 + rng() % (r1 - r0);
    const uint32_t out_cols = trial % 11 == 0 ? 0 : trial % 3 == 0 ? 1 : 1 + rng() % (c1 - c0);
    const PoolOp pool = trial % 2 == 0 ? PoolOp::kSum : PoolOp::kMax;
    ReadSpec spec = View(r0, r1, c0, c1, out_rows, out_cols, pool, rng() % 2 == 1);
    if (out_cols == 0) spec.col_factor = 1 + rng() % 13;
    ExpectRead(*h, bins, spec);
  }
}

TEST_P(ReadTest, PooledViewOfTheWaferShapeToScreenSizes) {
  HISTD_SEEDED_RNG(rng);
  std::vector<uint8_t> bins;
  const uint32_t rows = 256, cols = 8192;
  auto h = Random(rng, rows, cols, 255, &bins);
  ASSERT_NE(h, nullptr);
  for (PoolOp pool : {PoolOp::kSum, PoolOp::kMax}) {
    ExpectRead(*h, bins, View(0, rows, 0, cols, 256, 1024, pool, false));  // 1 x 8 blocks
    ExpectRead(*h, bins, View(0, rows, 0, cols, 100, 1000, pool, false));  // 2.56 x 8.192
    ExpectRead(*h, bins, View(0, rows, 0, cols, 1, 1, pool, false));        // one block
    ExpectRead(*h, bins, View(10, 74, 1000, 1300, 64, 300, pool, true));    // one bin each
    ExpectRead(*h, bins, View(rows - 1, rows, cols - 3, cols, 1, 2, pool, false));  // last bins
  }
}

TEST_P(ReadTest, MaxPoolingByFactorKeepsOneByte) {
  HISTD_SEEDED_RNG(rng);
  std::vector<uint8_t> bins;
  auto h = Random(rng, 33, 31, 7, &bins);
  ASSERT_NE(h, nullptr);
  ReadSpec spec = Spec(0, 33, 0, 31, 4, 5, false);
  spec.pool = PoolOp::kMax;
  EXPECT_EQ(ReadBinsType(spec), DType::kU8);
  ExpectRead(*h, bins, spec);
  spec.transpose = true;
  ExpectRead(*h, bins, spec);
}

TEST_P(ReadTest, PooledViewOfAHotBinAndASaturatedBin) {
  // Sum pooling adds a block's bins; max pooling shows a saturated bin at cap however many
  // empty bins share its block.
  auto h = NewHistogram(engine(), 64, 1000, 9);
  ASSERT_NE(h, nullptr);
  std::vector<uint8_t> bins(64 * 1000, 0);
  bins[5 * 1000 + 500] = 9;  // saturated
  bins[60 * 1000 + 2] = 3;
  bins[61 * 1000 + 3] = 4;
  std::mt19937_64 rng(2);
  FillHistogram(engine(), *h, bins, rng);
  // 64 x 1000 to 3 x 7: rows [0, 21) [21, 42) [42, 64); cols [0, 142) [142, 285) [285, 428)
  // [428, 571) ...
  std::vector<uint32_t> sums(3 * 7), maxima(3 * 7, 0);
  ASSERT_TRUE(engine().ReadBins(*h, View(0, 64, 0, 1000, 3, 7, PoolOp::kSum, false),
                                sums.data()).ok());
  std::vector<uint8_t> max_bytes(3 * 7);
  ASSERT_TRUE(engine().ReadBins(*h, View(0, 64, 0, 1000, 3, 7, PoolOp::kMax, false),
                                max_bytes.data()).ok());
  std::vector<uint32_t> expected_sums(3 * 7, 0), expected_max(3 * 7, 0);
  expected_sums[0 * 7 + 3] = 9;
  expected_sums[2 * 7 + 0] = 7;
  expected_max[0 * 7 + 3] = 9;
  expected_max[2 * 7 + 0] = 4;
  EXPECT_EQ(sums, expected_sums);
  EXPECT_EQ(std::vector<uint32_t>(max_bytes.begin(), max_bytes.end()), expected_max);
}

TEST_P(ReadTest, BadSpecsAreInvalidArgument) {
  auto h = NewHistogram(engine(), 256, 16, 255);
  ASSERT_NE(h, nullptr);
  std::vector<uint8_t> out(1 << 16);
  absl::Status s = engine().ReadBins(*h, Spec(3, 300, 0, 16, 1, 1, false), out.data());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(s.message()).find("region rows [3, 300) exceed the histogram's 256 rows"),
            std::string::npos) << s;
  EXPECT_EQ(engine().ReadBins(*h, Spec(0, 1, 5, 4, 1, 1, false), out.data()).code(),
            absl::StatusCode::kInvalidArgument);  // cols end before they begin (0:0 is empty)
  EXPECT_EQ(engine().ReadBins(*h, Spec(0, 1, 0, 1, 0, 1, false), out.data()).code(),
            absl::StatusCode::kInvalidArgument);
  // A pooled view larger than its region, or given with a factor too.
  s = engine().ReadBins(*h, View(0, 10, 0, 16, 11, 16, PoolOp::kSum, false), out.data());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(s.message()).find("out_rows 11 exceeds the region's 10 rows"),
            std::string::npos) << s;
  ReadSpec both = View(0, 10, 0, 16, 5, 4, PoolOp::kSum, false);
  both.col_factor = 2;
  s = engine().ReadBins(*h, both, out.data());
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(s.message()).find("out_cols 4 and a cols factor of 2"),
            std::string::npos) << s;
  EXPECT_EQ(engine().ReadBins(*h, View(0, 0, 0, 16, 1, 4, PoolOp::kSum, false), out.data()).code(),
            absl::StatusCode::kInvalidArgument);  // an empty region has no block to pool
  EXPECT_EQ(engine().ReadBins(*h, View(0, 10, 0, 16, 5, 4, static_cast<PoolOp>(7), false),
                              out.data()).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_P(ReadTest, SummarizeCountsSaturatedBinsAndTotal) {
  HISTD_SEEDED_RNG(rng);
  for (uint8_t cap : {1, 7, 255}) {
    std::vector<uint8_t> bins;
    auto h = Random(rng, 61, 157, cap, &bins);
    ASSERT_NE(h, nullptr);
    absl::StatusOr<HistogramSummary> summary = engine().Summarize(*h);
    ASSERT_TRUE(summary.ok()) << summary.status();
    uint64_t total = 0, saturated = 0;
    for (uint8_t b : bins) {
      total += b;
      saturated += b == cap;
    }
    EXPECT_EQ(summary->total_count, total);
    EXPECT_EQ(summary->saturated_bins, saturated);
  }
  auto empty = NewHistogram(engine(), 1, 1, 1);
  ASSERT_NE(empty, nullptr);
  absl::StatusOr<HistogramSummary> summary = engine().Summarize(*empty);
  ASSERT_TRUE(summary.ok());
  EXPECT_EQ(summary->total_count, 0u);
  EXPECT_EQ(summary->saturated_bins, 0u);
}

TEST_P(ReadTest, MergeSaturatesAtTheTargetCap) {
  HISTD_SEEDED_RNG(rng);
  for (auto [source_cap, target_cap] : {std::pair<uint8_t, uint8_t>{255, 255}, {255, 7}, {3, 200}, {1, 1}}) {
    SCOPED_TRACE(::testing::Message() << "caps " << int{source_cap} << " -> " << int{target_cap});
    std::vector<uint8_t> s_bins, t_bins;
    auto source = Random(rng, 41, 67, source_cap, &s_bins);
    auto target = Random(rng, 41, 67, target_cap, &t_bins);
    ASSERT_NE(source, nullptr);
    ASSERT_NE(target, nullptr);
    ASSERT_TRUE(engine().Merge(*source, *target).ok());
    std::vector<uint8_t> expected(t_bins.size());
    for (size_t i = 0; i < expected.size(); ++i) {
      expected[i] = static_cast<uint8_t>(std::min<int>(target_cap, int{s_bins[i]} + t_bins[i]));
    }
    EXPECT_EQ(ReadAll(engine(), *target), expected);
    EXPECT_EQ(ReadAll(engine(), *source), s_bins);  // the source is unchanged
  }
}

TEST_P(ReadTest, MergeFromHostSaturatesAtTheTargetCap) {
  HISTD_SEEDED_RNG(rng);
  std::vector<uint8_t> t_bins;
  auto target = Random(rng, 13, 1001, 9, &t_bins);
  ASSERT_NE(target, nullptr);
  std::vector<uint8_t> host = RandomBins(rng, t_bins.size(), 255);
  ASSERT_TRUE(engine().MergeFromHost(host.data(), *target).ok());
  for (size_t i = 0; i < t_bins.size(); ++i)
    t_bins[i] = static_cast<uint8_t>(std::min<int>(9, int{host[i]} + t_bins[i]));
  EXPECT_EQ(ReadAll(engine(), *target), t_bins);
}

TEST_P(ReadTest, MergeIntoItselfDoublesSaturating) {
  HISTD_SEEDED_RNG(rng);
  std::vector<uint8_t> bins;
  auto h = Random(rng, 19, 23, 100, &bins);
  ASSERT_NE(h, nullptr);
  ASSERT_TRUE(engine().Merge(*h, *h).ok());
  for (uint8_t& b : bins) b = static_cast<uint8_t>(std::min(100, 2 * b));
  EXPECT_EQ(ReadAll(engine(), *h), bins);
}

TEST_P(ReadTest, MergeOfDifferentShapesIsInvalidArgument) {
  auto a = NewHistogram(engine(), 4, 6);
  auto b = NewHistogram(engine(), 6, 4);  // same bins, other shape
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  absl::Status s = engine().Merge(*a, *b);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(std::string(s.message()).find("4 x 6"), std::string::npos) << s;
}

TEST_P(ReadTest, ResetZeroesAndTheHistogramKeepsWorking) {
  HISTD_SEEDED_RNG(rng);
  std::vector<uint8_t> bins;
  auto h = Random(rng, 50, 70, 9, &bins);
  ASSERT_NE(h, nullptr);
  ASSERT_TRUE(engine().Reset(*h).ok());
  EXPECT_EQ(ReadAll(engine(), *h), std::vector<uint8_t>(50 * 70, 0));
  testing::ApplyIndices(engine(), *h, {0, 3499, 3499});
  std::vector<uint8_t> expected(50 * 70, 0);
  expected[0] = 1;
  expected[3499] = 2;
  EXPECT_EQ(ReadAll(engine(), *h), expected);
}

TEST_P(ReadTest, CreateRejectsBadShapes) {
  EXPECT_EQ(engine().CreateHistogram(HistogramShape{0, 4, 255}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(engine().CreateHistogram(HistogramShape{4, 4, 0}).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto h = NewHistogram(engine(), 3, 5, 1);
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->shape().rows, 3u);
  EXPECT_EQ(h->shape().cols, 5u);
  EXPECT_EQ(h->shape().cap, 1);
  EXPECT_GE(h->bytes_used(), 15u);
}

// A shape beyond kMaxHistogramBins (2^31 bins) is refused before any allocation: 2^32 - 1
// squared bytes (16 EiB) is INVALID_ARGUMENT, not an attempt that runs out of memory.
TEST_P(ReadTest, CreateRefusesShapesBeyondTheLargestHistogram) {
  absl::StatusOr<std::unique_ptr<HistogramStorage>> h =
      engine().CreateHistogram(HistogramShape{0xFFFFFFFFu, 0xFFFFFFFFu, 255});
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument) << h.status();
  EXPECT_NE(h.status().message().find("exceeds the largest histogram"), std::string::npos) << h.status();
  h = engine().CreateHistogram(HistogramShape{2, (1u << 30) + 1, 255});  // one row past 2^31 bins
  EXPECT_EQ(h.status().code(), absl::StatusCode::kInvalidArgument) << h.status();
}

// Apply (one call over both histograms), Merge both ways, reads and Reset from several
// threads at once: everything completes (no lock-order deadlock) and no bin exceeds its cap.
TEST_P(ReadTest, MixedConcurrentOperationsComplete) {
  HISTD_SEEDED_RNG(rng);
  auto a = NewHistogram(engine(), 16, 16, 9);
  auto b = NewHistogram(engine(), 16, 16, 200);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  std::vector<uint32_t> indices(4096);
  for (uint32_t& i : indices) i = rng() % 256;
  auto staging = testing::Stage(engine(), indices.data(), indices.size() * 4);
  ASSERT_NE(staging, nullptr);
  IngestItem on_a, on_b;
  on_a.histogram = a.get();
  on_a.count = 2048;
  on_b = on_a;
  on_b.histogram = b.get();
  on_b.byte_offset = 8192;
  // Lean (racecheck, where a launch costs tens of seconds): two threads of three operations,
  // each kind once in all.
  const bool lean = testing::LeanSweep();
  const int threads_count = lean ? 2 : 4, operations = lean ? 3 : 40, stride = lean ? 3 : 1;
  std::vector<std::thread> threads;
  for (int t = 0; t < threads_count; ++t) {
    threads.emplace_back([&, t] {
      std::vector<uint8_t> out(256);
      for (int i = 0; i < operations; ++i) {
        switch ((stride * t + i) % 6) {
          case 0: EXPECT_TRUE(testing::ApplyAndWait(engine(), *staging, {on_b, on_a, on_b}).status.ok()); break;
          case 1: EXPECT_TRUE(engine().Merge(*a, *b).ok()); break;
          case 2: EXPECT_TRUE(engine().Merge(*b, *a).ok()); break;
          case 3: EXPECT_TRUE(engine().ReadBins(*b, Spec(0, 16, 0, 16, 1, 1, true), out.data()).ok()); break;
          case 4: EXPECT_TRUE(engine().Reduce(testing::HistogramRef(*a), ReduceOp::kMax, Dim::kAll).ok()); break;
          case 5: EXPECT_TRUE(engine().Reset(*a).ok()); break;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (uint8_t v : ReadAll(engine(), *a)) ASSERT_LE(v, 9);
  for (uint8_t v : ReadAll(engine(), *b)) ASSERT_LE(v, 200);
}

}  // namespace
}  // namespace histd
