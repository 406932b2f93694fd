// The production kernel (HistogramAccumulate) against the CPU reference, bit for bit, on
// Roulo's clustered workload, uniform, single bin, service-shaped work lists and the edge
// cases of docs/development.md ("Test"), under every option set of ExactOptionSweep().
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string_view>
#include <vector>

#include "bench/histogram_workloads.cuh"
#include "kernels/histogram/bucketed_layout.h"
#include "tests/kernels/histogram/histogram_test_util.h"

namespace histd::testing {
namespace {

HostHistogram MakeHist(uint32_t rows, uint32_t cols, uint8_t cap) {
  HostHistogram h;
  h.rows = rows;
  h.cols = cols;
  h.cap = cap;
  h.bins.assign(uint64_t{rows} * cols, 0);
  return h;
}

// Start values: 0 zero, 1 random in [0, cap], 2 poison 0xA5, 3 mostly at cap or above.
void FillStart(HostHistogram* h, int mode, std::mt19937_64& rng) {
  for (auto& b : h->bins) {
    switch (mode) {
      case 0: b = 0; break;
      case 1: b = static_cast<uint8_t>(rng() % (h->cap + 1u)); break;
      case 2: b = 0xA5; break;
      default: b = static_cast<uint8_t>(rng() % 4 == 0 ? rng() % (h->cap + 1u) : h->cap + rng() % (256u - h->cap)); break;
    }
  }
}

HostItem IndexItem(int hist, std::vector<uint32_t> idx) {
  HostItem it;
  it.histogram = hist;
  it.kind = 0;
  it.words = std::move(idx);
  return it;
}

std::vector<uint32_t> Clustered(uint64_t seed, size_t n, uint32_t rows, uint32_t cols,
                                const workload::ClusterSpec& c) {
  std::vector<uint32_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = workload::ClusterSample(seed, i, rows, cols, c);
  return v;
}

std::vector<uint32_t> Uniform(uint64_t seed, size_t n, uint32_t bins) {
  std::vector<uint32_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = workload::UniformSample(seed, i, bins);
  return v;
}

void SweepAndCompare(const std::vector<HostHistogram>& hists, const std::vector<HostItem>& items,
                     const std::string& what, uint32_t misalign = 0, uint32_t gap = 0) {
  const HarnessResult want = RunReference(hists, items);
  for (const auto& [name, options] : ExactOptionSweep()) {
    // The bucketed strategy refuses longer work lists (CanImplementRejectsBadArguments).
    if (options.strategy == cuda::HistogramStrategy::kBucketed && items.size() > size_t{cuda::histogram::kBucketMaxItems})
      continue;
    const HarnessResult got = RunHarness(hists, items, options, misalign, gap);
    ExpectSameResult(want, got, what + " [" + name + "] seed " + std::to_string(TestSeed()));
  }
}

TEST(CudaHistogramAccumulate, RouloClusteredExact) {
  HISTD_REQUIRE_GPU();
  std::mt19937_64 rng(TestSeed());
  std::vector<HostHistogram> hists;
  std::vector<HostItem> items;
  for (int h = 0; h < 4; ++h) {
    hists.push_back(MakeHist(256, 8192, 255));
    FillStart(&hists.back(), h, rng);
    items.push_back(IndexItem(h, Clustered(TestSeed() + h, Scaled(1u << 20), 256, 8192,
                                           workload::RouloCluster(256, 8192))));
  }
  // An off-centre cluster: the window must follow the data, not the centre.
  hists.push_back(MakeHist(256, 8192, 200));
  items.push_back(IndexItem(4, Clustered(TestSeed() + 9, Scaled(1u << 19), 256, 8192,
                                         workload::ClusterSpec{30.f, 7000.f, 4.f, 200.f, 0.05f})));
  SweepAndCompare(hists, items, "roulo clustered");
}

TEST(CudaHistogramAccumulate, UniformExact) {
  HISTD_REQUIRE_GPU();
  std::mt19937_64 rng(TestSeed() ^ 1);
  std::vector<HostHistogram> hists = {MakeHist(256, 8192, 255), MakeHist(256, 8192, 3)};
  FillStart(&hists[1], 1, rng);
  std::vector<HostItem> items = {IndexItem(0, Uniform(TestSeed(), Scaled(1u << 20), 256 * 8192)),
                                 IndexItem(1, Uniform(TestSeed() + 1, Scaled(3u << 20), 256 * 8192))};
  SweepAndCompare(hists, items, "uniform");
}

// Deferred units whose one-byte lanes carry: hot bins far from the window (where the
// cluster draws it) take thousands of deferred misses each, next to speckle that makes the
// item defer; one word holds bins of 256 and 255 deferred hits, the edges of a byte lane.
// The second kernel must notice the carries and count those units again in 16-bit lanes.
TEST(CudaHistogramAccumulate, DeferredHotBinsOutsideTheWindow) {
  HISTD_REQUIRE_GPU();
  std::mt19937_64 rng(TestSeed() ^ 5);
  constexpr uint32_t kRows = 256, kCols = 8192, kBins = kRows * kCols;
  const uint32_t hot[] = {5 * kCols + 100, 250 * kCols + 8000, 3 * kCols + 7000, 200 * kCols + 9};
  const uint32_t edge = 240 * kCols + 400;  // a word's first bin: 256 hits, its second: 255
  std::vector<HostHistogram> hists;
  std::vector<HostItem> items;
  const uint8_t caps[] = {255, 7, 254};
  for (int h = 0; h < 3; ++h) {
    hists.push_back(MakeHist(kRows, kCols, caps[h]));
    FillStart(&hists.back(), h == 2 ? 1 : 0, rng);
    std::vector<uint32_t> v = Clustered(TestSeed() + 20 + h, Scaled(600000), kRows, kCols, workload::ClusterSpec{128.f, 4096.f, 6.f, 40.f, 0.f});
    const std::vector<uint32_t> speckle = Uniform(TestSeed() + 30 + h, Scaled(300000), kBins);
    v.insert(v.end(), speckle.begin(), speckle.end());
    for (uint32_t i = 0; i < Scaled(100000, 4 * 1024); ++i) v.push_back(hot[i % 4]);
    v.insert(v.end(), 256, edge);
    v.insert(v.end(), 255, edge + 1);
    std::shuffle(v.begin(), v.end(), rng);
    items.push_back(IndexItem(h, std::move(v)));
  }
  SweepAndCompare(hists, items, "deferred hot bins outside the window");
}

// Staged windows (StagesWindow: a deferring tile writes its window's counts for the second
// kernel, which adds them under the range's lock): two items on one histogram with
// overlapping clusters (their units take the same ranges' locks in turn), an item of four
// tiles at the default tile (four staged windows meeting the same ranges), caps 255, 7 and
// 254 over random and at-cap starts; an item too long to stage (more tiles than
// kMaxStagedTilesPerItem at small tiles), a histogram whose rows do not start on 16-byte
// chunks (cols % 16 == 8: windows merged at once), and the whole list again with misaligned
// bins (nothing staged).
TEST(CudaHistogramAccumulate, StagedWindowsOverlapAndShareHistograms) {
  HISTD_REQUIRE_GPU();
  std::mt19937_64 rng(TestSeed() ^ 6);
  constexpr uint32_t kRows = 256, kCols = 8192;
  std::vector<HostHistogram> hists = {MakeHist(kRows, kCols, 255), MakeHist(kRows, kCols, 7),
                                      MakeHist(kRows, kCols, 254), MakeHist(kRows, 8200, 255)};
  FillStart(&hists[0], 1, rng);
  FillStart(&hists[1], 3, rng);
  FillStart(&hists[2], 1, rng);
  std::vector<HostItem> items;
  auto clustered_with_speckle = [&](int h, uint64_t seed, size_t n, const workload::ClusterSpec& c) {
    const HostHistogram& hh = hists[h];
    std::vector<uint32_t> v = Clustered(seed, n, hh.rows, hh.cols, c);
    const std::vector<uint32_t> speckle = Uniform(seed + 1, n / 4, hh.rows * hh.cols);  // the items defer
    v.insert(v.end(), speckle.begin(), speckle.end());
    std::shuffle(v.begin(), v.end(), rng);
    items.push_back(IndexItem(h, std::move(v)));
  };
  clustered_with_speckle(0, TestSeed() + 40, Scaled(600000), workload::ClusterSpec{120.f, 4000.f, 8.f, 64.f, 0.f});
  clustered_with_speckle(0, TestSeed() + 41, Scaled(600000), workload::ClusterSpec{130.f, 4300.f, 8.f, 64.f, 0.f});
  clustered_with_speckle(1, TestSeed() + 42, Scaled(800000), workload::RouloCluster(kRows, kCols));
  clustered_with_speckle(2, TestSeed() + 43, Scaled(2400000), workload::ClusterSpec{60.f, 1000.f, 6.f, 100.f, 0.f});
  clustered_with_speckle(3, TestSeed() + 44, Scaled(500000), workload::ClusterSpec{128.f, 4100.f, 8.f, 64.f, 0.f});
  SweepAndCompare(hists, items, "staged windows");
  SweepAndCompare(hists, items, "staged windows, misaligned bins", /*misalign=*/3, /*gap=*/5);
}

TEST(CudaHistogramAccumulate, SingleBinEveryCap) {
  HISTD_REQUIRE_GPU();
  std::vector<HostHistogram> hists;
  std::vector<HostItem> items;
  const uint8_t caps[] = {1, 2, 254, 255};
  const uint32_t targets[] = {0, 256 * 8192 - 1, 37 * 8192 + 5001, 128 * 8192 + 4096};
  for (int h = 0; h < 4; ++h) {
    hists.push_back(MakeHist(256, 8192, caps[h]));
    items.push_back(IndexItem(h, std::vector<uint32_t>(Scaled(1u << 20, 1024), targets[h])));
  }
  hists[2].bins[targets[2]] = 250;  // accumulation into a non-zero bin near the cap
  SweepAndCompare(hists, items, "single bin");
}

TEST(CudaHistogramAccumulate, ServiceShapedWorkList) {
  HISTD_REQUIRE_GPU();
  std::mt19937_64 rng(TestSeed() ^ 2);
  std::vector<HostHistogram> hists;
  for (int h = 0; h < 40; ++h) {
    const uint32_t rows = h % 3 == 0 ? 256 : 64, cols = h % 3 == 0 ? 8192 : 1000 + h;
    const uint8_t cap = static_cast<uint8_t>(h % 5 == 0 ? 1 + rng() % 4 : 255 - rng() % 3);
    hists.push_back(MakeHist(rows, cols, cap));
    FillStart(&hists.back(), h % 4, rng);
  }
  std::vector<HostItem> items;
  for (int i = 0; i < 300; ++i) {
    const int h = static_cast<int>(rng() % hists.size());
    const HostHistogram& hh = hists[h];
    const uint32_t count_choice = rng() % 10;
    const size_t n = count_choice == 0 ? 0 : count_choice == 1 ? 1 : count_choice == 2 ? Scaled(1u << 16) : rng() % Scaled(70000);
    if (i % 2 == 0) {
      const workload::ClusterSpec c{float(rng() % hh.rows), float(rng() % hh.cols), 3.f, 30.f, 0.1f};
      items.push_back(IndexItem(h, Clustered(rng(), n, hh.rows, hh.cols, c)));
    } else {
      items.push_back(IndexItem(h, Uniform(rng(), n, hh.rows * hh.cols)));
    }
  }
  SweepAndCompare(hists, items, "service aligned");
  SweepAndCompare(hists, items, "service misaligned", /*misalign=*/3, /*gap=*/5);
}

TEST(CudaHistogramAccumulate, EdgeShapesCountsAndCaps) {
  HISTD_REQUIRE_GPU();
  std::mt19937_64 rng(TestSeed() ^ 3);
  const uint32_t wide = LeanSweep() ? 1031 : 8193;  // lean: racecheck's cost follows the bins staged
  const uint32_t shapes[][2] = {{1, 1}, {1, 3}, {3, 1}, {1, 100003}, {100003, 1}, {3, 5},
                                {37, 101}, {255, wide}, {2, 50000}};
  const uint8_t caps[] = {1, 2, 254, 255};
  const size_t counts[] = {0, 1, 2, 3, 5, 1023, 1025, Scaled(12345, 1026), Scaled(70001, 1027)};
  std::vector<HostHistogram> hists;
  std::vector<HostItem> items;
  for (const auto& s : shapes) {
    for (uint8_t cap : caps) {
      if (LeanSweep() && (cap == 2 || cap == 254)) continue;  // lean: the extreme caps
      const int h = static_cast<int>(hists.size());
      hists.push_back(MakeHist(s[0], s[1], cap));
      FillStart(&hists.back(), h % 4, rng);
      const uint32_t bins = s[0] * s[1];
      for (size_t n : counts) {
        if (LeanSweep() && n > 1025) continue;  // lean: 1023 and 1025 already cross a tile
        std::vector<uint32_t> idx(n);
        for (size_t i = 0; i < n; ++i) {
          const uint32_t r = rng() % 8;  // the last bin, the first bin, a hot bin, or uniform
          idx[i] = r == 0 ? bins - 1 : r == 1 ? 0 : r == 2 ? bins / 2 : static_cast<uint32_t>(rng() % bins);
        }
        items.push_back(IndexItem(h, std::move(idx)));
      }
    }
  }
  SweepAndCompare(hists, items, "edge shapes");
  SweepAndCompare(hists, items, "edge shapes misaligned", 1, 1);
}

// A work list longer than the window kernel plans by itself (1,024 items) takes the planner
// kernel first: 1,100 items, a third of them empty, over eight histograms of two shapes.
TEST(CudaHistogramAccumulate, LongWorkListsArePlannedByTheirOwnKernel) {
  HISTD_REQUIRE_GPU();
  std::mt19937_64 rng(TestSeed() ^ 6);
  std::vector<HostHistogram> hists;
  for (int h = 0; h < 8; ++h) {
    const uint32_t cols = LeanSweep() ? 701 : 7001;  // lean: racecheck's cost follows the bins staged
    hists.push_back(h % 2 ? MakeHist(256, 1024, 255) : MakeHist(300, cols, static_cast<uint8_t>(1 + h)));
    FillStart(&hists.back(), h % 4, rng);
  }
  std::vector<HostItem> items;
  for (int i = 0; i < 1100; ++i) {
    const int h = static_cast<int>(rng() % hists.size());
    const HostHistogram& hh = hists[h];
    const size_t n = i % 3 == 0 ? 0 : 1 + rng() % (LeanSweep() ? 8 : Scaled(6000));  // lean: the items count
    const workload::ClusterSpec c{float(rng() % hh.rows), float(rng() % hh.cols), 3.f, 30.f, 0.1f};
    items.push_back(i % 2 ? IndexItem(h, Uniform(rng(), n, hh.rows * hh.cols))
                          : IndexItem(h, Clustered(rng(), n, hh.rows, hh.cols, c)));
  }
  SweepAndCompare(hists, items, "1,100 items");
}

// Histograms above the bucketed strategy's kBucketMaxSlices slices (4M bins) take exact
// global updates at once, in the same launch as bucketed ones; last slices that are partial,
// and several items on one histogram.
TEST(CudaHistogramAccumulate, LargeAndSmallHistogramsInOneLaunch) {
  HISTD_REQUIRE_GPU();
  std::mt19937_64 rng(TestSeed() ^ 4);
  std::vector<HostHistogram> hists = {MakeHist(2049, 2049, 255), MakeHist(256, 8192, 3), MakeHist(1, 16385, 254)};
  FillStart(&hists[0], 1, rng);
  FillStart(&hists[2], 2, rng);
  std::vector<HostItem> items;
  for (int i = 0; i < 9; ++i) {
    const int h = i % 3;
    const HostHistogram& hh = hists[h];
    const workload::ClusterSpec c{float(rng() % hh.rows), float(rng() % hh.cols), 4.f, 40.f, 0.2f};
    items.push_back(i % 2 ? IndexItem(h, Uniform(rng(), 20000 + i, hh.rows * hh.cols))
                          : IndexItem(h, Clustered(rng(), 30000 + i, hh.rows, hh.cols, c)));
  }
  SweepAndCompare(hists, items, "4.2M-bin histogram with small ones");
}

// Interleaved slices (BucketSliceMap): a 16-byte-aligned histogram whose bin count is not a
// multiple of 16 (its last chunk is shared with the next histogram, a one-bin one, and is
// merged by CAS from both sides), then an aligned 1000 x 1000 one; clustered eyes, a hot
// last bin and small caps, one message-sized item each, as a daemon batch.
TEST(CudaHistogramAccumulate, InterleavedSlicesAndTheirSharedLastChunk) {
  HISTD_REQUIRE_GPU();
  std::mt19937_64 rng(TestSeed() ^ 5);
  std::vector<HostHistogram> hists = {MakeHist(1001, 999, 255), MakeHist(1, 1, 2), MakeHist(1000, 1000, 3)};
  ASSERT_EQ((hists[0].bins.size() + hists[1].bins.size()) % 16, 0u) << "the third histogram starts aligned";
  FillStart(&hists[0], 1, rng);
  FillStart(&hists[2], 3, rng);
  const uint32_t last = 1001 * 999 - 1;
  std::vector<HostItem> items;
  items.push_back(IndexItem(0, Clustered(rng(), Scaled(1u << 18), 1001, 999, {500.f, 499.f, 8.f, 64.f, 0.1f})));
  items.push_back(IndexItem(0, std::vector<uint32_t>(3000, last)));
  items.push_back(IndexItem(1, std::vector<uint32_t>(5, 0)));
  items.push_back(IndexItem(2, Clustered(rng(), Scaled(1u << 18), 1000, 1000, {20.f, 990.f, 4.f, 16.f, 0.05f})));
  items.push_back(IndexItem(2, Uniform(rng(), Scaled(1u << 16), 1000 * 1000)));
  SweepAndCompare(hists, items, "interleaved slices");
}

TEST(CudaHistogramAccumulate, EmptyWorkListsAreNoOps) {
  HISTD_REQUIRE_GPU();
  std::vector<HostHistogram> hists = {MakeHist(4, 4, 9)};
  hists[0].bins[5] = 3;
  SweepAndCompare(hists, {}, "no items");
  SweepAndCompare(hists, {IndexItem(0, {}), IndexItem(0, {})}, "zero-count items");
}

TEST(CudaHistogramAccumulate, CanImplementRejectsBadArguments) {
  HISTD_REQUIRE_GPU();
  using cuda::HistogramAccumulate;
  cuda::HistogramAccumulateArgs a;
  EXPECT_TRUE(HistogramAccumulate::can_implement(a).ok());  // nothing to do
  EXPECT_EQ(HistogramAccumulate::get_workspace_size(a), 0u);
  a.work_count = -1;
  EXPECT_EQ(HistogramAccumulate::can_implement(a).code(), absl::StatusCode::kInvalidArgument);
  a.work_count = 3;  // null work list
  EXPECT_EQ(HistogramAccumulate::can_implement(a).code(), absl::StatusCode::kInvalidArgument);
  auto fake = reinterpret_cast<cuda::HistogramWork*>(uintptr_t{256});
  a.work = fake;
  a.outflow = reinterpret_cast<cuda::HistogramOutflow*>(uintptr_t{512});
  a.total_samples = 10;  // samples null
  EXPECT_EQ(HistogramAccumulate::can_implement(a).code(), absl::StatusCode::kInvalidArgument);
  a.samples = reinterpret_cast<const uint32_t*>(uintptr_t{1024});
  EXPECT_TRUE(HistogramAccumulate::can_implement(a).ok());
  EXPECT_GE(HistogramAccumulate::get_workspace_size(a), 4 * sizeof(uint32_t));
  cuda::HistogramVariantOptions unknown;  // a configuration no candidate has
  unknown.config = 99;
  EXPECT_EQ(cuda::HistogramVariant::can_implement(a, unknown).code(), absl::StatusCode::kInvalidArgument);
  unknown.strategy = cuda::HistogramStrategy::kBucketed;
  unknown.config = cuda::histogram::kBucketedCandidateCount;
  EXPECT_EQ(cuda::HistogramVariant::can_implement(a, unknown).code(), absl::StatusCode::kInvalidArgument);
  a.options.tile_samples = 5;
  EXPECT_EQ(HistogramAccumulate::can_implement(a).code(), absl::StatusCode::kInvalidArgument);
  a.options.tile_samples = 0;
  a.options.defer_bins_per_miss = (1u << 24) + 1;
  EXPECT_EQ(HistogramAccumulate::can_implement(a).code(), absl::StatusCode::kInvalidArgument);
  a.options.defer_bins_per_miss = 1u << 24;
  EXPECT_TRUE(HistogramAccumulate::can_implement(a).ok());
  a.options.bucket_slice_bins = 4096;
  EXPECT_EQ(HistogramAccumulate::can_implement(a).code(), absl::StatusCode::kInvalidArgument);
  a.options.bucket_slice_bins = 8192;
  EXPECT_TRUE(HistogramAccumulate::can_implement(a).ok());
  a.options.bucket_slice_bins = 0;
  // The bucketed strategy keeps its items' prefixes on chip: at most kBucketMaxItems. kAuto
  // then takes the hot-window path instead.
  a.options = {};
  a.options.strategy = cuda::HistogramStrategy::kBucketed;
  a.work_count = cuda::histogram::kBucketMaxItems + 1;
  const absl::Status too_many = HistogramAccumulate::can_implement(a);
  EXPECT_EQ(too_many.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(too_many.message().find("at most"), std::string_view::npos) << too_many;
  a.options.strategy = cuda::HistogramStrategy::kAuto;
  EXPECT_TRUE(HistogramAccumulate::can_implement(a).ok());
  a.work_count = cuda::histogram::kBucketMaxItems;
  a.options.strategy = cuda::HistogramStrategy::kBucketed;
  EXPECT_TRUE(HistogramAccumulate::can_implement(a).ok());
  EXPECT_GE(HistogramAccumulate::get_workspace_size(a), size_t{cuda::histogram::kBucketRecordBytes} * cuda::histogram::kBucketMaxItems);
  // A host copy of the work list has its shapes checked: at most kMaxHistogramBins bins.
  a.options = {};
  a.work_count = 2;
  cuda::HistogramWork host[2] = {};
  host[0].rows = 1u << 15;
  host[0].cols = 1u << 16;  // exactly kMaxHistogramBins
  host[1].rows = 1;
  host[1].cols = 1;
  a.host_work = host;
  EXPECT_TRUE(HistogramAccumulate::can_implement(a).ok()) << HistogramAccumulate::can_implement(a);
  host[1].cols = (1u << 31) + 1;
  const absl::Status big = HistogramAccumulate::can_implement(a);
  EXPECT_EQ(big.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(big.message().find("work item 1 is 1 x 2147483649"), std::string_view::npos) << big;
  host[1].cols = 0;
  EXPECT_EQ(HistogramAccumulate::can_implement(a).code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace histd::testing
