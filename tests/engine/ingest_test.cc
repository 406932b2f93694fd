// Engine::Apply: exact saturating binning of bin indices and coordinates against
// tests/engine/reference.h, on random inputs and the edge cases of docs/development.md. Runs on
// every engine (the CUDA instance reports SKIPPED without a GPU).
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <iterator>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/types/span.h"
#include "gtest/gtest.h"
#include "engine/engine.h"
#include "tests/engine/engine_test_util.h"
#include "tests/engine/reference.h"
#include "tests/lean_sweep.h"

namespace histd {
namespace {

using testing::ApplyAndWait;
using testing::ApplyIndices;
using testing::ApplyOutcome;
using testing::NewHistogram;
using testing::ReadAll;
using testing::Stage;

class IngestTest : public testing::EngineTest {};
HISTD_INSTANTIATE_ENGINE_TEST(IngestTest);

std::vector<uint32_t> RandomIndices(std::mt19937_64& rng, uint64_t n, uint64_t bins) {
  std::vector<uint32_t> v(n);
  // Half uniform, half on a hot 1% window (skew), so some bins saturate at small caps.
  const uint64_t hot = std::max<uint64_t>(1, bins / 100);
  const uint64_t hot_start = rng() % bins;
  for (uint32_t& x : v) {
    const uint64_t r = rng();
    x = static_cast<uint32_t>((r & 1) ? (r >> 1) % bins : (hot_start + (r >> 1) % hot) % bins);
  }
  return v;
}

// Every field of every item's result.
void ExpectResults(const std::vector<IngestItemResult>& got,
                   const std::vector<IngestItemResult>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "item " << i);
    EXPECT_EQ(got[i].binned, want[i].binned);
    EXPECT_EQ(got[i].x_underflow, want[i].x_underflow);
    EXPECT_EQ(got[i].x_overflow, want[i].x_overflow);
    EXPECT_EQ(got[i].y_underflow, want[i].y_underflow);
    EXPECT_EQ(got[i].y_overflow, want[i].y_overflow);
  }
}

TEST_P(IngestTest, RandomIndicesMatchReference) {
  HISTD_SEEDED_RNG(rng);
  struct Case { uint32_t rows, cols; uint8_t cap; uint64_t n; };
  const Case cases[] = {{1, 1, 255, 0},    {1, 1, 7, 1},       {1, 31, 2, 33},
                        {33, 1, 1, 1000},  {17, 129, 254, 100003}, {64, 1000, 255, 1000003},
                        {3, 5, 7, 1000003}};
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.rows << " x " << c.cols << " cap " << int{c.cap}
                                      << " n " << c.n);
    auto h = NewHistogram(engine(), c.rows, c.cols, c.cap);
    ASSERT_NE(h, nullptr);
    const std::vector<uint32_t> indices = RandomIndices(rng, c.n, uint64_t{c.rows} * c.cols);
    ApplyIndices(engine(), *h, indices);
    const std::vector<uint8_t> expected = ref::BinIndices(indices, h->shape().bins(), c.cap);
    ASSERT_EQ(ReadAll(engine(), *h), expected);
    absl::StatusOr<HistogramSummary> summary = engine().Summarize(*h);
    ASSERT_TRUE(summary.ok()) << summary.status();
    uint64_t total = 0, saturated = 0;
    for (uint8_t b : expected) {
      total += b;
      saturated += b == c.cap;
    }
    EXPECT_EQ(summary->total_count, total);
    EXPECT_EQ(summary->saturated_bins, saturated);
  }
}

TEST_P(IngestTest, AllSamplesOnTheLastBinSaturateAtEveryCap) {
  for (uint8_t cap : {1, 2, 7, 254, 255}) {
    SCOPED_TRACE(::testing::Message() << "cap " << int{cap});
    auto h = NewHistogram(engine(), 37, 53, cap);
    ASSERT_NE(h, nullptr);
    const uint32_t last = 37 * 53 - 1;
    ApplyIndices(engine(), *h, std::vector<uint32_t>(300001, last));  // many tasks race on it
    const std::vector<uint8_t> bins = ReadAll(engine(), *h);
    EXPECT_EQ(bins[last], cap);
    for (uint32_t i = 0; i < last; ++i) ASSERT_EQ(bins[i], 0) << "bin " << i;
  }
}

TEST_P(IngestTest, HitsJustBelowAtAndAboveCap) {
  for (uint8_t cap : {1, 2, 7, 254, 255}) {
    for (int delta : {-1, 0, 1}) {
      const int hits = int{cap} + delta;
      if (hits < 0) continue;
      auto h = NewHistogram(engine(), 1, 3, cap);
      ASSERT_NE(h, nullptr);
      ApplyIndices(engine(), *h, std::vector<uint32_t>(hits, 1));
      EXPECT_EQ(ReadAll(engine(), *h), (std::vector<uint8_t>{0, static_cast<uint8_t>(std::min(hits, int{cap})), 0}))
          << "cap " << int{cap} << " hits " << hits;
    }
  }
}

TEST_P(IngestTest, ManyItemsOverSeveralHistogramsIncludingOneTwice) {
  HISTD_SEEDED_RNG(rng);
  std::vector<std::unique_ptr<HistogramStorage>> hs;
  hs.push_back(NewHistogram(engine(), 1, 1000, 3));
  hs.push_back(NewHistogram(engine(), 31, 33, 255));
  hs.push_back(NewHistogram(engine(), 1000, 1, 1));
  for (auto& h : hs) ASSERT_NE(h, nullptr);
  const AxisRange x{-2.0f, 3.0f}, y{10.0f, 11.0f};
  // Layout: items with varied sizes (0, 1, odd) and kinds, histogram 1 hit three times.
  struct Plan { size_t h; SampleKind kind; uint64_t n; };
  const Plan plans[] = {{1, SampleKind::kBinIndex, 5001}, {0, SampleKind::kBinIndex, 0},
                        {2, SampleKind::kBinIndex, 1},    {1, SampleKind::kCoordXY, 40003},
                        {0, SampleKind::kBinIndex, 33},   {1, SampleKind::kBinIndex, 70001},
                        {2, SampleKind::kCoordXY, 1000}};
  std::vector<uint8_t> bytes;
  std::vector<IngestItem> items;
  std::vector<std::vector<uint32_t>> expected_indices(hs.size());
  std::vector<IngestItemResult> expected_results;
  for (const Plan& p : plans) {
    const HistogramShape shape = hs[p.h]->shape();
    while (bytes.size() % 8 != 0) bytes.push_back(0xAB);  // padding between items
    IngestItem item;
    item.histogram = hs[p.h].get();
    item.kind = p.kind;
    item.byte_offset = bytes.size();
    item.count = p.n;
    IngestItemResult expect;
    if (p.kind == SampleKind::kBinIndex) {
      std::vector<uint32_t> idx = RandomIndices(rng, p.n, shape.bins());
      bytes.insert(bytes.end(), reinterpret_cast<uint8_t*>(idx.data()),
                   reinterpret_cast<uint8_t*>(idx.data() + idx.size()));
      expected_indices[p.h].insert(expected_indices[p.h].end(), idx.begin(), idx.end());
      expect.binned = p.n;
    } else {
      item.x = x;
      item.y = y;
      std::uniform_real_distribution<float> dx(-3.0f, 4.0f), dy(9.8f, 11.2f);
      std::vector<float> xy;
      for (uint64_t i = 0; i < p.n; ++i) {
        xy.push_back(dx(rng));
        xy.push_back(dy(rng));
      }
      bytes.insert(bytes.end(), reinterpret_cast<uint8_t*>(xy.data()),
                   reinterpret_cast<uint8_t*>(xy.data() + xy.size()));
      ref::CoordOutcome o = ref::BinCoords(xy, shape, x, y);
      expected_indices[p.h].insert(expected_indices[p.h].end(), o.indices.begin(), o.indices.end());
      expect = o.result;
    }
    items.push_back(item);
    expected_results.push_back(expect);
  }
  auto staging = Stage(engine(), bytes.data(), bytes.size());
  ASSERT_NE(staging, nullptr);
  ApplyOutcome outcome = ApplyAndWait(engine(), *staging, items);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_EQ(outcome.done_calls, 1);
  ExpectResults(outcome.results, expected_results);
  for (size_t h = 0; h < hs.size(); ++h) {
    EXPECT_EQ(ReadAll(engine(), *hs[h]),
              ref::BinIndices(expected_indices[h], hs[h]->shape().bins(), hs[h]->shape().cap))
        << "histogram " << h;
  }
}

// Batches large enough that the CPU engine splits a histogram's bins among its threads
// (cpu_ingest.h): several items of index and coordinate samples on one 2M-bin histogram,
// samples piled on every possible part boundary (bins * p / parts, p < 8) and the ends,
// plus a second histogram in the same batch.
TEST_P(IngestTest, LargeBatchesOfOneHistogramAreExact) {
  HISTD_SEEDED_RNG(rng);
  // Cap 40: the hot window of RandomIndices saturates, while each boundary bin gets a few
  // samples only, so a bin applied by two parts would show.
  auto big = NewHistogram(engine(), 256, 8192, 40);
  auto other = NewHistogram(engine(), 100, 300, 255);
  ASSERT_NE(big, nullptr);
  ASSERT_NE(other, nullptr);
  const uint64_t bins = big->shape().bins();
  std::vector<uint32_t> edges = {0, 1, static_cast<uint32_t>(bins - 1), static_cast<uint32_t>(bins - 2)};
  for (uint64_t parts = 2; parts <= 8; ++parts) {
    for (uint64_t p = 1; p < parts; ++p) {
      const uint64_t lo = bins * p / parts;
      for (uint64_t b : {lo - 1, lo, lo + 1}) edges.push_back(static_cast<uint32_t>(b));
    }
  }
  const AxisRange x{0.0f, 8192.0f}, y{0.0f, 256.0f};
  std::vector<uint8_t> bytes;
  std::vector<IngestItem> items;
  std::vector<uint32_t> expect_big, expect_other;
  std::vector<IngestItemResult> expected_results;
  auto add_indices = [&](HistogramStorage* h, std::vector<uint32_t> idx, std::vector<uint32_t>* expect) {
    IngestItem item;
    item.histogram = h;
    item.kind = SampleKind::kBinIndex;
    item.byte_offset = bytes.size();
    item.count = idx.size();
    bytes.insert(bytes.end(), reinterpret_cast<uint8_t*>(idx.data()),
                 reinterpret_cast<uint8_t*>(idx.data() + idx.size()));
    expect->insert(expect->end(), idx.begin(), idx.end());
    items.push_back(item);
    IngestItemResult r;
    r.binned = idx.size();
    expected_results.push_back(r);
  };
  for (int k = 0; k < 3; ++k) {
    std::vector<uint32_t> idx = RandomIndices(rng, 300007, bins);
    for (size_t i = 0; i < idx.size(); i += 3001) idx[i] = edges[rng() % edges.size()];
    add_indices(big.get(), std::move(idx), &expect_big);
  }
  add_indices(other.get(), RandomIndices(rng, 50001, other->shape().bins()), &expect_other);
  {  // coordinates on the same big histogram, some outside the axes, some on part edges
    std::vector<float> xy;
    std::uniform_real_distribution<float> dx(-100.0f, 8300.0f), dy(-3.0f, 259.0f);
    for (int i = 0; i < 200003; ++i) {
      if (i % 4001 == 0) {
        const uint32_t e = edges[rng() % edges.size()];
        xy.push_back(static_cast<float>(e % 8192) + 0.5f);
        xy.push_back(static_cast<float>(e / 8192) + 0.5f);
      } else {
        xy.push_back(dx(rng));
        xy.push_back(dy(rng));
      }
    }
    IngestItem item;
    item.histogram = big.get();
    item.kind = SampleKind::kCoordXY;
    item.byte_offset = bytes.size();
    item.count = xy.size() / 2;
    item.x = x;
    item.y = y;
    bytes.insert(bytes.end(), reinterpret_cast<uint8_t*>(xy.data()),
                 reinterpret_cast<uint8_t*>(xy.data() + xy.size()));
    ref::CoordOutcome o = ref::BinCoords(xy, big->shape(), x, y);
    expect_big.insert(expect_big.end(), o.indices.begin(), o.indices.end());
    items.push_back(item);
    expected_results.push_back(o.result);
  }
  auto staging = Stage(engine(), bytes.data(), bytes.size());
  ASSERT_NE(staging, nullptr);
  ApplyOutcome outcome = ApplyAndWait(engine(), *staging, items);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  ExpectResults(outcome.results, expected_results);
  EXPECT_EQ(ReadAll(engine(), *big), ref::BinIndices(expect_big, bins, 40));
  EXPECT_EQ(ReadAll(engine(), *other), ref::BinIndices(expect_other, other->shape().bins(), 255));
}

TEST_P(IngestTest, CoordinatesOnTheAxisEdges) {
  const uint32_t rows = 7, cols = 10;
  auto h = NewHistogram(engine(), rows, cols, 255);
  ASSERT_NE(h, nullptr);
  const AxisRange x{-1.0f, 1.5f}, y{100.0f, 107.0f};
  const float x_last = std::nextafter(x.hi, -INFINITY), y_last = std::nextafter(y.hi, -INFINITY);
  const float x_below = std::nextafter(x.lo, -INFINITY), y_below = std::nextafter(y.lo, -INFINITY);
  struct Sample { float x, y; int64_t row, col; };  // row/col -1 under, -2 over
  const Sample samples[] = {
      {x.lo, y.lo, 0, 0},               // lo -> bin 0
      {x_last, y_last, rows - 1, cols - 1},  // just below hi -> last bin
      {x.hi, y.lo, 0, -2},              // hi -> overflow
      {x.lo, y.hi, -2, 0},
      {x_below, y.lo, 0, -1},           // below lo -> underflow
      {x.lo, y_below, -1, 0},
      {x_below, y.hi, -2, -1},          // out on both axes: counted on both
      {1e30f, -1e30f, -1, -2},
      {0.0f, 103.5f, 3, 4},             // interior: (0 + 1) / 0.25 = 4; (3.5) / 1 = 3
  };
  std::vector<float> xy;
  IngestItemResult expect;
  std::vector<uint8_t> expected(rows * cols, 0);
  for (const Sample& s : samples) {
    xy.push_back(s.x);
    xy.push_back(s.y);
    expect.x_underflow += s.col == -1;
    expect.x_overflow += s.col == -2;
    expect.y_underflow += s.row == -1;
    expect.y_overflow += s.row == -2;
    if (s.row >= 0 && s.col >= 0) {
      ++expect.binned;
      ++expected[s.row * cols + s.col];
    }
  }
  // The reference agrees with the hand-written expectations.
  const ref::CoordOutcome o = ref::BinCoords(xy, h->shape(), x, y);
  ASSERT_EQ(o.result.binned, expect.binned);
  auto staging = Stage(engine(), xy.data(), xy.size() * sizeof(float));
  ASSERT_NE(staging, nullptr);
  IngestItem item;
  item.histogram = h.get();
  item.kind = SampleKind::kCoordXY;
  item.count = xy.size() / 2;
  item.x = x;
  item.y = y;
  ApplyOutcome outcome = ApplyAndWait(engine(), *staging, {item});
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  ASSERT_EQ(outcome.results.size(), 1u);
  EXPECT_EQ(outcome.results[0].binned, expect.binned);
  EXPECT_EQ(outcome.results[0].x_underflow, expect.x_underflow);
  EXPECT_EQ(outcome.results[0].x_overflow, expect.x_overflow);
  EXPECT_EQ(outcome.results[0].y_underflow, expect.y_underflow);
  EXPECT_EQ(outcome.results[0].y_overflow, expect.y_overflow);
  EXPECT_EQ(ReadAll(engine(), *h), expected);
}

TEST_P(IngestTest, RandomCoordinatesMatchReference) {
  HISTD_SEEDED_RNG(rng);
  struct Case { uint32_t rows, cols; AxisRange x, y; };
  const Case cases[] = {{1, 1, {0.0f, 1.0f}, {0.0f, 1.0f}},
                        {1, 1000, {-5.0f, 5.0f}, {0.0f, 1e-3f}},
                        {333, 1, {1e6f, 1e6f + 64.0f}, {-1.0f, 1.0f}},
                        {256, 8192, {-3.0f, 7.0f}, {0.1f, 0.3f}}};
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.rows << " x " << c.cols);
    auto h = NewHistogram(engine(), c.rows, c.cols, 3);
    ASSERT_NE(h, nullptr);
    std::vector<float> xy;
    const float xw = c.x.hi - c.x.lo, yw = c.y.hi - c.y.lo;
    std::uniform_real_distribution<float> ux(c.x.lo - 0.1f * xw, c.x.hi + 0.1f * xw);
    std::uniform_real_distribution<float> uy(c.y.lo - 0.1f * yw, c.y.hi + 0.1f * yw);
    for (int i = 0; i < 200001; ++i) {
      xy.push_back(ux(rng));
      xy.push_back(uy(rng));
    }
    auto staging = Stage(engine(), xy.data(), xy.size() * sizeof(float));
    ASSERT_NE(staging, nullptr);
    IngestItem item;
    item.histogram = h.get();
    item.kind = SampleKind::kCoordXY;
    item.count = xy.size() / 2;
    item.x = c.x;
    item.y = c.y;
    ApplyOutcome outcome = ApplyAndWait(engine(), *staging, {item});
    ASSERT_TRUE(outcome.status.ok()) << outcome.status;
    const ref::CoordOutcome o = ref::BinCoords(xy, h->shape(), c.x, c.y);
    EXPECT_EQ(outcome.results[0].binned, o.result.binned);
    EXPECT_EQ(outcome.results[0].x_underflow, o.result.x_underflow);
    EXPECT_EQ(outcome.results[0].x_overflow, o.result.x_overflow);
    EXPECT_EQ(outcome.results[0].y_underflow, o.result.y_underflow);
    EXPECT_EQ(outcome.results[0].y_overflow, o.result.y_overflow);
    EXPECT_GT(o.result.x_underflow + o.result.x_overflow, 0u);  // the edges were exercised
    EXPECT_EQ(ReadAll(engine(), *h), ref::BinIndices(o.indices, h->shape().bins(), 3));
  }
}

TEST_P(IngestTest, ConcurrentAppliesOnOneHistogramAreExact) {
  HISTD_SEEDED_RNG(rng);
  struct Case { uint32_t rows, cols; uint8_t cap; uint64_t batch; };
  // Large batches (spread over the pool) with saturated hot bins; then small dense batches
  // that keep most bins below the cap, so a lost update would show.
  const Case cases[] = {{64, 129, 7, 20011}, {64, 129, 255, 20011}, {1, 257, 255, 2003}};
  // Lean (racecheck, where a launch costs tens of seconds): the first case, one launch per thread.
  const bool lean = testing::LeanSweep();
  for (const Case& c : absl::MakeSpan(cases, lean ? 1 : std::size(cases))) {
    SCOPED_TRACE(::testing::Message() << c.rows << " x " << c.cols << " cap " << int{c.cap});
    auto h = NewHistogram(engine(), c.rows, c.cols, c.cap);
    ASSERT_NE(h, nullptr);
    const int kThreads = lean ? 2 : 4, kRounds = lean ? 1 : 6;
    std::vector<std::vector<uint32_t>> batches(kThreads * kRounds);
    std::vector<uint32_t> all;
    for (auto& b : batches) {
      b = RandomIndices(rng, c.batch, uint64_t{c.rows} * c.cols);
      all.insert(all.end(), b.begin(), b.end());
    }
    std::vector<std::thread> producers;
    for (int t = 0; t < kThreads; ++t) {
      producers.emplace_back([&, t] {
        for (int r = 0; r < kRounds; ++r) ApplyIndices(engine(), *h, batches[t * kRounds + r]);
      });
    }
    for (std::thread& t : producers) t.join();
    EXPECT_EQ(ReadAll(engine(), *h), ref::BinIndices(all, uint64_t{c.rows} * c.cols, c.cap));
  }
}

// Merges into a histogram while batches for it are being applied: saturating adds compose,
// so the result is min(cap, hits + merges x source) in any order. Batches are dense (on
// the CUDA engine their misses are deferred and merged under the kernel's locks) and hold
// two items for the same histogram; merges run between submissions, without waiting.
TEST_P(IngestTest, MergesWhileApplyingAreExact) {
  HISTD_SEEDED_RNG(rng);
  constexpr uint32_t kRows = 256, kCols = 8192;
  constexpr uint64_t kBins = uint64_t{kRows} * kCols;
  constexpr uint64_t kItemSamples = 1u << 18;  // >= bins / 16: deferred on the CUDA engine
  constexpr int kBatches = 6, kMerges = 3;
  constexpr uint8_t kCap = 200;
  auto target = NewHistogram(engine(), kRows, kCols, kCap);
  auto source = NewHistogram(engine(), kRows, kCols, 255);
  ASSERT_NE(target, nullptr);
  ASSERT_NE(source, nullptr);
  std::vector<uint8_t> source_bins(kBins);
  for (uint8_t& b : source_bins) b = static_cast<uint8_t>(rng() % 3);
  testing::FillHistogram(engine(), *source, source_bins, rng);

  std::vector<uint32_t> all;
  std::vector<std::unique_ptr<StagingBuffer>> stagings;
  std::vector<std::shared_ptr<ApplyOutcome>> outcomes;
  std::vector<std::shared_ptr<absl::Notification>> done;
  int merges = 0;
  for (int b = 0; b < kBatches; ++b) {
    std::vector<uint32_t> indices(2 * kItemSamples);
    for (uint32_t& x : indices) x = static_cast<uint32_t>(rng() % kBins);
    all.insert(all.end(), indices.begin(), indices.end());
    stagings.push_back(Stage(engine(), indices.data(), indices.size() * sizeof(uint32_t)));
    ASSERT_NE(stagings.back(), nullptr);
    IngestItem first, second;
    first.histogram = second.histogram = target.get();
    first.count = second.count = kItemSamples;
    second.byte_offset = kItemSamples * sizeof(uint32_t);
    auto outcome = std::make_shared<ApplyOutcome>();
    auto notification = std::make_shared<absl::Notification>();
    engine().Apply(*stagings.back(), {first, second},
                   [outcome, notification](absl::Status s, std::vector<IngestItemResult> r) {
                     outcome->status = std::move(s);
                     outcome->results = std::move(r);
                     if (++outcome->done_calls == 1) notification->Notify();
                   });
    outcomes.push_back(outcome);
    done.push_back(notification);
    if (b % 2 == 1 && merges < kMerges) {
      ASSERT_TRUE(engine().Merge(*source, *target).ok());
      ++merges;
    }
  }
  for (auto& n : done) n->WaitForNotification();
  for (auto& o : outcomes) ASSERT_TRUE(o->status.ok()) << o->status;

  std::vector<uint64_t> hits(kBins, 0);
  for (uint32_t x : all) ++hits[x];
  std::vector<uint8_t> expected(kBins);
  for (uint64_t i = 0; i < kBins; ++i)
    expected[i] = static_cast<uint8_t>(
        std::min<uint64_t>(kCap, hits[i] + static_cast<uint64_t>(merges) * source_bins[i]));
  EXPECT_EQ(ReadAll(engine(), *target), expected);
}

TEST_P(IngestTest, EmptyApplyCallsDoneOnce) {
  auto staging = Stage(engine(), nullptr, 0);
  ASSERT_NE(staging, nullptr);
  ApplyOutcome outcome = ApplyAndWait(engine(), *staging, {});
  EXPECT_TRUE(outcome.status.ok()) << outcome.status;
  EXPECT_EQ(outcome.done_calls, 1);
  EXPECT_TRUE(outcome.results.empty());
}

TEST_P(IngestTest, BadItemsFailTheWholeApplyAndApplyNothing) {
  auto h = NewHistogram(engine(), 4, 4, 255);
  ASSERT_NE(h, nullptr);
  std::vector<uint32_t> idx(16, 5);
  auto staging = Stage(engine(), idx.data(), idx.size() * 4);
  ASSERT_NE(staging, nullptr);
  IngestItem good;
  good.histogram = h.get();
  good.count = 4;
  std::vector<IngestItem> bad_items;
  IngestItem past_end = good;  // 4 samples at offset 56 end at byte 72 > 64
  past_end.byte_offset = 56;
  IngestItem misaligned = good;
  misaligned.byte_offset = 2;
  IngestItem no_histogram = good;
  no_histogram.histogram = nullptr;
  IngestItem no_axes = good;  // coordinates on an empty x axis [0, 0)
  no_axes.kind = SampleKind::kCoordXY;
  no_axes.count = 2;
  IngestItem huge = good;
  huge.count = std::numeric_limits<size_t>::max() / 2;
  for (const IngestItem& bad : {past_end, misaligned, no_histogram, no_axes, huge}) {
    ApplyOutcome outcome = ApplyAndWait(engine(), *staging, {good, bad});
    EXPECT_EQ(outcome.status.code(), absl::StatusCode::kInvalidArgument) << outcome.status;
    EXPECT_NE(std::string(outcome.status.message()).find("item 1"), std::string::npos)
        << outcome.status;
    EXPECT_EQ(outcome.done_calls, 1);
    EXPECT_EQ(outcome.results.size(), 2u);
  }
  EXPECT_EQ(ReadAll(engine(), *h), std::vector<uint8_t>(16, 0));  // the good item neither
}

// CPU-only: the stats counters.
TEST(CpuEngineStatsTest, CountsAppliedBatches) {
  auto engine = MakeEngine(EngineOptions{EngineKind::kCpu, 2, 0});
  ASSERT_TRUE(engine.ok()) << engine.status();
  auto h = NewHistogram(**engine, 2, 2);
  ASSERT_NE(h, nullptr);
  ApplyIndices(**engine, *h, {0, 1, 3});
  ApplyIndices(**engine, *h, {2});
  const EngineStats stats = (*engine)->stats();
  EXPECT_EQ(stats.batches, 2u);
  EXPECT_EQ(stats.items, 2u);
  EXPECT_EQ(stats.samples, 4u);
  EXPECT_EQ(stats.bytes, 16u);
  EXPECT_EQ(stats.in_flight, 0u);
  EXPECT_EQ((*engine)->name(), "cpu (2 threads)");
  EXPECT_EQ((*engine)->device(), "cpu");
}


// Items read in place from a registered region (zero-copy ingest, docs/shm-ingest.md),
// mapped read-only as the daemon maps a producer's object, beside staged items in one batch;
// then the engine's validation of region items: one with a bad bin index (the last sample,
// or several) is applied not at all and reported, the others of its batch are applied, and
// the NaN coordinates of a region item are counted.
class RegionIngestTest : public testing::EngineTest {};
HISTD_INSTANTIATE_ENGINE_TEST(RegionIngestTest);

TEST_P(RegionIngestTest, RegionItemsBesideStagedItemsMatchReference) {
  HISTD_SEEDED_RNG(rng);
  const size_t region_bytes = 3 << 20;
  const int fd = memfd_create("histd-region-test", 0);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(ftruncate(fd, region_bytes), 0);
  auto* writable = static_cast<uint8_t*>(
      mmap(nullptr, region_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  const auto* readonly =
      static_cast<const uint8_t*>(mmap(nullptr, region_bytes, PROT_READ, MAP_SHARED, fd, 0));
  close(fd);
  ASSERT_NE(writable, MAP_FAILED);
  ASSERT_NE(readonly, MAP_FAILED);
  absl::StatusOr<std::unique_ptr<HostRegion>> region =
      engine().RegisterHostRegion(readonly, region_bytes);
  ASSERT_TRUE(region.ok()) << region.status();
  ASSERT_NE(*region, nullptr) << "this engine does not read regions in place";

  auto a = NewHistogram(engine(), 37, 1001, 200);
  auto b = NewHistogram(engine(), 256, 4096, 255);
  const uint64_t a_bins = a->shape().bins(), b_bins = b->shape().bins();
  // Region: [0, 400000) indices of a, then 300001 of b; staged: 12345 of b, 999 of a.
  const std::vector<uint32_t> ra = RandomIndices(rng, 100000, a_bins);
  const std::vector<uint32_t> rb = RandomIndices(rng, 300001, b_bins);
  const std::vector<uint32_t> sb = RandomIndices(rng, 12345, b_bins);
  const std::vector<uint32_t> sa = RandomIndices(rng, 999, a_bins);
  std::memcpy(writable, ra.data(), ra.size() * 4);
  std::memcpy(writable + 400000, rb.data(), rb.size() * 4);
  std::vector<uint32_t> staged = sb;
  staged.insert(staged.end(), sa.begin(), sa.end());
  // The staging layout reserves room for the region items too, as the pipeline does.
  const size_t staged_bytes = staged.size() * 4;
  const size_t total = staged_bytes + (ra.size() + rb.size()) * 4;
  absl::StatusOr<std::unique_ptr<StagingBuffer>> staging = engine().CreateStagingBuffer(total);
  ASSERT_TRUE(staging.ok()) << staging.status();
  std::memcpy((*staging)->data(), staged.data(), staged_bytes);
  std::vector<IngestItem> items(4);
  items[0] = IngestItem{a.get(), SampleKind::kBinIndex, staged_bytes, ra.size()};
  items[0].region = region->get();
  items[0].region_offset = 0;
  items[1] = IngestItem{b.get(), SampleKind::kBinIndex, 0, sb.size()};
  items[2] = IngestItem{b.get(), SampleKind::kBinIndex, staged_bytes + ra.size() * 4, rb.size()};
  items[2].region = region->get();
  items[2].region_offset = 400000;
  items[3] = IngestItem{a.get(), SampleKind::kBinIndex, sb.size() * 4, sa.size()};
  ApplyOutcome outcome = ApplyAndWait(engine(), **staging, items);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  ASSERT_EQ(outcome.results.size(), 4u);
  for (const IngestItemResult& r : outcome.results) EXPECT_EQ(r.out_of_range, 0u);
  EXPECT_EQ(outcome.results[2].binned, rb.size());
  std::vector<uint32_t> all_a = ra, all_b = rb;
  all_a.insert(all_a.end(), sa.begin(), sa.end());
  all_b.insert(all_b.end(), sb.begin(), sb.end());
  EXPECT_EQ(ReadAll(engine(), *a), ref::BinIndices(all_a, a_bins, 200));
  EXPECT_EQ(ReadAll(engine(), *b), ref::BinIndices(all_b, b_bins, 255));

  // The engine validates region items (Engine::Apply): in one batch, an item whose last
  // sample is out of range and one with three bad indices are applied not at all, beside a
  // good region item, a staged item and a region item of coordinates with NaNs.
  auto c = NewHistogram(engine(), 3, 5, 255);
  auto d = NewHistogram(engine(), 3, 5, 255);
  auto e = NewHistogram(engine(), 4, 6, 255);
  std::vector<uint32_t> last_bad(1000, 4);
  last_bad.back() = 15;  // one past the last bin
  std::vector<uint32_t> three_bad(1000, 2);
  three_bad[7] = 0xffffffffu;
  three_bad[500] = 16;
  three_bad.back() = 31;
  const std::vector<uint32_t> good(300, 1);
  std::vector<float> xy;
  for (int i = 0; i < 5000; ++i) {
    xy.push_back(i % 7 == 0 ? std::nanf("") : 0.5f);
    xy.push_back(i % 11 == 0 ? -std::nanf("") : 0.25f);
  }
  std::memcpy(writable, last_bad.data(), 4000);
  std::memcpy(writable + 4096, three_bad.data(), 4000);
  std::memcpy(writable + 8192, good.data(), 1200);
  std::memcpy(writable + 16384, xy.data(), xy.size() * 4);
  std::memcpy((*staging)->data(), good.data(), 1200);
  std::vector<IngestItem> batch(5);
  batch[0] = IngestItem{c.get(), SampleKind::kBinIndex, 0, good.size()};  // staged
  batch[1] = IngestItem{c.get(), SampleKind::kBinIndex, 1200, last_bad.size()};
  batch[1].region = region->get();
  batch[1].region_offset = 0;
  batch[2] = IngestItem{d.get(), SampleKind::kBinIndex, 5200, three_bad.size()};
  batch[2].region = region->get();
  batch[2].region_offset = 4096;
  batch[3] = IngestItem{d.get(), SampleKind::kBinIndex, 9200, good.size()};
  batch[3].region = region->get();
  batch[3].region_offset = 8192;
  batch[4] = IngestItem{e.get(), SampleKind::kCoordXY, 10400, xy.size() / 2};
  batch[4].region = region->get();
  batch[4].region_offset = 16384;
  batch[4].x = AxisRange{0.0f, 1.0f};
  batch[4].y = AxisRange{0.0f, 1.0f};
  outcome = ApplyAndWait(engine(), **staging, batch);
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  ASSERT_EQ(outcome.results.size(), 5u);
  for (int i : {0, 3, 4}) {
    SCOPED_TRACE(::testing::Message() << "item " << i);
    EXPECT_EQ(outcome.results[i].invalid, 0u);
    EXPECT_EQ(outcome.results[i].out_of_range, 0u);
  }
  EXPECT_EQ(outcome.results[0].binned, good.size());
  EXPECT_EQ(outcome.results[1].invalid, 1u);
  EXPECT_EQ(outcome.results[1].first_invalid, 999u);
  EXPECT_EQ(outcome.results[1].first_invalid_value, 15u);
  EXPECT_EQ(outcome.results[1].binned, 0u);
  EXPECT_EQ(outcome.results[2].invalid, 3u);
  EXPECT_EQ(outcome.results[2].first_invalid, 7u);
  EXPECT_EQ(outcome.results[2].first_invalid_value, 0xffffffffu);
  EXPECT_EQ(outcome.results[2].binned, 0u);
  EXPECT_EQ(outcome.results[3].binned, good.size());
  uint64_t x_nan = 0, y_nan = 0;
  for (size_t i = 0; i < xy.size() / 2; ++i) {
    x_nan += std::isnan(xy[2 * i]);
    y_nan += std::isnan(xy[2 * i + 1]);
  }
  EXPECT_EQ(outcome.results[4].x_nan, x_nan);
  EXPECT_EQ(outcome.results[4].y_nan, y_nan);
  const ref::CoordOutcome coords = ref::BinCoords(xy, e->shape(), batch[4].x, batch[4].y);
  EXPECT_EQ(outcome.results[4].binned, coords.result.binned);
  EXPECT_EQ(outcome.results[4].x_overflow, coords.result.x_overflow);  // NaNs included
  EXPECT_EQ(ReadAll(engine(), *e), ref::BinIndices(coords.indices, e->shape().bins(), 255));
  // c: only the staged item (bin 1); d: only the good region item (bin 1).
  std::vector<uint8_t> want(15, 0);
  want[1] = 255;
  EXPECT_EQ(ReadAll(engine(), *c), want);
  EXPECT_EQ(ReadAll(engine(), *d), want);
  region->reset();
  munmap(writable, region_bytes);
  munmap(const_cast<uint8_t*>(readonly), region_bytes);
}

}  // namespace
}  // namespace histd
