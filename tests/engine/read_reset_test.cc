// Engine::ReadAndReset on every engine (and forwarded by the multi engine), and ReadBins of
// empty regions: the bins come back exactly and the histogram is zero after, whatever the
// shape (padding on the CUDA engine) and cap; under concurrent Apply calls no sample is lost
// or returned twice.
#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "engine/cpu/cpu_engine.h"
#include "engine/multi_engine.h"
#include "tests/engine/engine_test_util.h"
#include "tests/lean_sweep.h"

namespace histd {
namespace {

using testing::ApplyAndWait;
using testing::ApplyIndices;
using testing::EngineTest;
using testing::FillHistogram;
using testing::NewHistogram;
using testing::RandomBins;
using testing::ReadAll;
using testing::Stage;

class ReadAndResetTest : public EngineTest {};

TEST_P(ReadAndResetTest, ReturnsTheBinsAndZeroesThem) {
  HISTD_SEEDED_RNG(rng);
  // Shapes whose bin counts are not multiples of 16 leave padding on the CUDA engine.
  for (const HistogramShape shape : {HistogramShape{1, 1, 255}, HistogramShape{7, 13, 9},
                                     HistogramShape{33, 257, 255}, HistogramShape{256, 8192, 1}}) {
    SCOPED_TRACE(::testing::Message() << shape.rows << " x " << shape.cols << " cap " << int{shape.cap});
    auto h = NewHistogram(engine(), shape.rows, shape.cols, shape.cap);
    ASSERT_NE(h, nullptr);
    const std::vector<uint8_t> values = RandomBins(rng, shape.bins(), shape.cap);
    FillHistogram(engine(), *h, values, rng);
    std::vector<uint8_t> out(shape.bins(), 0xAB);
    ASSERT_TRUE(engine().ReadAndReset(*h, out.data()).ok());
    EXPECT_EQ(out, values);
    absl::StatusOr<HistogramSummary> summary = engine().Summarize(*h);
    ASSERT_TRUE(summary.ok()) << summary.status();
    EXPECT_EQ(summary->total_count, 0u);
    EXPECT_EQ(ReadAll(engine(), *h), std::vector<uint8_t>(shape.bins(), 0));
    // The last bin counts from zero again, up to the cap and no further.
    ApplyIndices(engine(), *h, std::vector<uint32_t>(shape.cap + 3u, shape.bins() - 1));
    ASSERT_TRUE(engine().ReadAndReset(*h, out.data()).ok());
    std::vector<uint8_t> expected(shape.bins(), 0);
    expected.back() = shape.cap;
    EXPECT_EQ(out, expected);
    EXPECT_EQ(ReadAll(engine(), *h), std::vector<uint8_t>(shape.bins(), 0));
  }
}

TEST_P(ReadAndResetTest, RefusesANullOutput) {
  auto h = NewHistogram(engine(), 4, 4);
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(engine().ReadAndReset(*h, nullptr).code(), absl::StatusCode::kInvalidArgument);
}

// Two appliers and one harvester: the harvested outputs plus what is left add up, bin for
// bin, to every sample applied (no bin reaches the cap, so sums are exact counts).
TEST_P(ReadAndResetTest, ConcurrentAppliesAreNeitherLostNorCountedTwice) {
  HISTD_SEEDED_RNG(rng);
  const HistogramShape shape{64, 1000, 255};
  auto h = NewHistogram(engine(), shape.rows, shape.cols, shape.cap);
  ASSERT_NE(h, nullptr);
  constexpr int kAppliers = 2, kBatchSamples = 200;
  const int kBatches = testing::LeanSweep() ? 2 : 150;  // lean (racecheck): 4 launches in all
  std::vector<std::vector<uint32_t>> batches(kAppliers * kBatches);
  std::vector<uint64_t> applied(shape.bins(), 0);
  for (auto& batch : batches) {
    batch.resize(kBatchSamples);
    for (uint32_t& s : batch) {
      s = static_cast<uint32_t>(rng() % shape.bins());
      applied[s] += 1;
    }
  }
  for (uint64_t hits : applied) ASSERT_LT(hits, 255u) << "reseed: a bin would saturate";
  std::atomic<int> appliers_left{kAppliers};
  std::vector<std::thread> threads;
  for (int a = 0; a < kAppliers; ++a) {
    threads.emplace_back([&, a] {
      for (int b = 0; b < kBatches; ++b) {
        const std::vector<uint32_t>& batch = batches[a * kBatches + b];
        auto staging = Stage(engine(), batch.data(), batch.size() * 4);
        IngestItem item;
        item.histogram = h.get();
        item.count = batch.size();
        EXPECT_TRUE(ApplyAndWait(engine(), *staging, {item}).status.ok());
      }
      appliers_left.fetch_sub(1);
    });
  }
  std::vector<uint64_t> harvested(shape.bins(), 0);
  std::vector<uint8_t> out(shape.bins());
  int cycles = 0;
  while (appliers_left.load() > 0 || cycles == 0) {
    ASSERT_TRUE(engine().ReadAndReset(*h, out.data()).ok());
    for (uint64_t i = 0; i < out.size(); ++i) harvested[i] += out[i];
    ++cycles;
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE(engine().ReadAndReset(*h, out.data()).ok());
  for (uint64_t i = 0; i < out.size(); ++i) harvested[i] += out[i];
  EXPECT_EQ(harvested, applied) << cycles << " cycles";
}

// Regression (issue 31, 7): an empty region reads as an empty array and leaves out alone.
TEST_P(ReadAndResetTest, ReadBinsOfAnEmptyRegionWritesNothing) {
  HISTD_SEEDED_RNG(rng);
  auto h = NewHistogram(engine(), 9, 17, 200);
  ASSERT_NE(h, nullptr);
  FillHistogram(engine(), *h, RandomBins(rng, 9 * 17, 200), rng);
  const Region regions[] = {{4, 4, 0, 17}, {0, 9, 17, 17}, {9, 9, 3, 5}, {0, 0, 0, 0}};
  for (const Region& region : regions) {
    for (const auto& [rf, cf, transpose] :
         {std::tuple{1u, 1u, false}, std::tuple{1u, 1u, true}, std::tuple{2u, 3u, false}}) {
      ReadSpec spec;
      spec.region = region;
      spec.row_factor = rf;
      spec.col_factor = cf;
      spec.transpose = transpose;
      EXPECT_EQ(ReadBinsBytes(spec), 0u);
      std::vector<uint8_t> out(16, 0x5A);
      absl::Status s = engine().ReadBins(*h, spec, out.data());
      EXPECT_TRUE(s.ok()) << s;
      EXPECT_EQ(out, std::vector<uint8_t>(16, 0x5A));
      EXPECT_TRUE(engine().ReadBins(*h, spec, nullptr).ok());
    }
  }
}

HISTD_INSTANTIATE_ENGINE_TEST(ReadAndResetTest);

TEST(MultiEngineReadAndResetTest, GoesToTheMemberThatHoldsTheHistogram) {
  HISTD_SEEDED_RNG(rng);
  std::vector<std::unique_ptr<Engine>> members;
  for (int i = 0; i < 2; ++i) members.push_back(std::move(*MakeCpuEngine(2)));
  std::unique_ptr<Engine> engine = std::move(*MakeMultiEngine(std::move(members)));
  auto a = NewHistogram(*engine, 20, 30, 7);
  auto b = NewHistogram(*engine, 20, 30, 7);
  ASSERT_NE(MemberOf(*a), MemberOf(*b));
  const std::vector<uint8_t> va = RandomBins(rng, 600, 7), vb = RandomBins(rng, 600, 7);
  FillHistogram(*engine, *a, va, rng);
  FillHistogram(*engine, *b, vb, rng);
  std::vector<uint8_t> out(600);
  ASSERT_TRUE(engine->ReadAndReset(*b, out.data()).ok());
  EXPECT_EQ(out, vb);
  EXPECT_EQ(ReadAll(*engine, *b), std::vector<uint8_t>(600, 0));
  EXPECT_EQ(ReadAll(*engine, *a), va);  // the other member's histogram is untouched
}

}  // namespace
}  // namespace histd
