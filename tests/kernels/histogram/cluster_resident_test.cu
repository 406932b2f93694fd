// The cluster-resident experiment (HistogramVariantOptions::cluster_resident, every config of
// kClusterResidentConfigs) against the independent CPU reference, bit for bit: Roulo's
// clustered workload and uniform (one and several passes), every sample on one bin under
// caps 1/2/254/255 (first, last and middle bins), accumulation into non-zero and poisoned
// (0xA5) histograms, many histograms and repeated histograms in one work list, any byte
// alignment, (x, y) pairs with outflow, adjacent bins of one word at the cap, and a
// histogram needing more than one pass. A config whose cluster cannot be scheduled on this
// device (FAILED_PRECONDITION) is reported and skipped; any other error is a failure.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "bench/histogram_workloads.cuh"
#include "tests/kernels/histogram/histogram_test_util.h"

namespace histd::testing {
namespace {

using cuda::HistogramVariantOptions;
namespace hg = cuda::histogram;

HostHistogram Hist(uint32_t rows, uint32_t cols, uint8_t cap, int start_mode, std::mt19937_64& rng) {
  HostHistogram h;
  h.rows = rows;
  h.cols = cols;
  h.cap = cap;
  h.bins.resize(uint64_t{rows} * cols);
  for (auto& b : h.bins) {
    switch (start_mode) {
      case 0: b = 0; break;
      case 1: b = static_cast<uint8_t>(rng() % (cap + 1u)); break;
      case 2: b = 0xA5; break;  // poison: above most caps
      default: b = static_cast<uint8_t>(rng() % 4 == 0 ? rng() % (cap + 1u) : cap + rng() % (256u - cap)); break;
    }
  }
  return h;
}

HostItem Indices(int hist, std::vector<uint32_t> idx) {
  HostItem it;
  it.histogram = hist;
  it.words = std::move(idx);
  return it;
}

// The configs a case runs: all of them, or under $HISTD_GPU_TEST_SWEEP=lean (racecheck:
// tests/kernels/run_compute_sanitizer.sh) the four that between them take every lane kind,
// both cluster sizes, warp combining and the CAS that guesses zero.
std::vector<int> ResidentConfigs() {
  if (LeanSweep()) return {1, 3, 6, 7};
  std::vector<int> all(hg::kClusterResidentConfigCount);
  for (int c = 0; c < hg::kClusterResidentConfigCount; ++c) all[c] = c;
  return all;
}

// Runs the cluster-resident configs (ResidentConfigs) on the case and compares with the reference.
void CompareResident(const std::vector<HostHistogram>& hists, const std::vector<HostItem>& items,
                     const std::string& what, uint32_t misalign = 0, uint32_t gap = 0) {
  const HarnessResult want = RunReference(hists, items);
  static_assert(hg::kClusterResidentConfigCount == 8, "ResidentConfigs' lean set covers configs 0-7");
  for (const int c : ResidentConfigs()) {
    HistogramVariantOptions o;
    o.cluster_resident = true;
    o.config = c;
    const std::string name = what + " [resident config " + std::to_string(c) + "] seed " + std::to_string(TestSeed());
    absl::Status st;
    const HarnessResult got = RunHarness(hists, items, o, misalign, gap, &st);
    if (st.code() == absl::StatusCode::kFailedPrecondition) {
      std::printf("[  NOTE    ] %s: not schedulable here, skipped: %s\n", name.c_str(), std::string(st.message()).c_str());
      continue;
    }
    if (!st.ok()) {
      ADD_FAILURE() << name << ": " << st;
      continue;
    }
    ExpectSameResult(want, got, name);
  }
}

TEST(CudaHistogramClusterResident, RouloAndUniformExact) {
  HISTD_REQUIRE_GPU();
  std::mt19937_64 rng(TestSeed());
  std::vector<HostHistogram> hists;
  std::vector<HostItem> items;
  for (int h = 0; h < 3; ++h) {
    hists.push_back(Hist(256, 8192, 255, h, rng));  // zero, random, poisoned starts
    std::vector<uint32_t> v(Scaled(1u << 20));
    const workload::ClusterSpec spec = workload::RouloCluster(256, 8192);
    for (size_t i = 0; i < v.size(); ++i) v[i] = workload::ClusterSample(TestSeed() + h, i, 256, 8192, spec);
    items.push_back(Indices(h, std::move(v)));
  }
  hists.push_back(Hist(256, 8192, 3, 1, rng));
  std::vector<uint32_t> u(Scaled(1u << 20));
  for (size_t i = 0; i < u.size(); ++i) u[i] = workload::UniformSample(TestSeed() + 7, i, 256 * 8192);
  items.push_back(Indices(3, std::move(u)));
  CompareResident(hists, items, "roulo + uniform");
}

TEST(CudaHistogramClusterResident, SingleBinEveryCapFirstLastMiddle) {
  HISTD_REQUIRE_GPU();
  std::mt19937_64 rng(TestSeed() ^ 1);
  const uint8_t caps[] = {1, 2, 254, 255};
  const uint32_t bins = 256 * 8192;
  const uint32_t targets[] = {0, bins - 1, 37 * 8192 + 5001, bins / 2};
  std::vector<HostHistogram> hists;
  std::vector<HostItem> items;
  for (int h = 0; h < 4; ++h) {
    hists.push_back(Hist(256, 8192, caps[h], 0, rng));
    items.push_back(Indices(h, std::vector<uint32_t>(Scaled(1u << 19, 1024), targets[h])));
  }
  hists[2].bins[targets[2]] = 250;  // accumulation near the cap
  hists[3].bins[targets[3]] = 255;  // already at the cap
  CompareResident(hists, items, "single bin");
}

TEST(CudaHistogramClusterResident, AdjacentBinsOfOneWordAtTheCap) {
  HISTD_REQUIRE_GPU();
  std::mt19937_64 rng(TestSeed() ^ 2);
  std::vector<HostHistogram> hists;
  std::vector<HostItem> items;
  for (uint8_t cap : {1, 127, 128, 254, 255}) {
    const int h = static_cast<int>(hists.size());
    hists.push_back(Hist(1, 64, cap, 0, rng));
    for (int b = 0; b < 8; ++b) hists.back().bins[b] = static_cast<uint8_t>(cap > 3 ? cap - 3 + b % 4 : b % 2);
    std::vector<uint32_t> v(Scaled(200000));
    for (auto& x : v) x = static_cast<uint32_t>(rng() % 8);  // two words, every byte hammered
    items.push_back(Indices(h, std::move(v)));
  }
  CompareResident(hists, items, "adjacent bins");
  CompareResident(hists, items, "adjacent bins misaligned", 3, 1);
}

TEST(CudaHistogramClusterResident, ManyHistogramsOneWorkList) {
  HISTD_REQUIRE_GPU();
  std::mt19937_64 rng(TestSeed() ^ 3);
  std::vector<HostHistogram> hists;
  // The lean sweep keeps the wide histograms wider than a block's shared memory, not 2M bins:
  // racecheck's cost follows the bins a cluster stages.
  const uint32_t wide = LeanSweep() ? 1031 : 8192;
  const int histograms = LeanSweep() ? 12 : 40;
  for (int h = 0; h < histograms; ++h) {
    const uint32_t rows = h % 3 == 0 ? 256 : 64, cols = h % 3 == 0 ? wide : 1000 + h;
    const uint8_t cap = static_cast<uint8_t>(h % 5 == 0 ? 1 + rng() % 4 : 255 - rng() % 3);
    hists.push_back(Hist(rows, cols, cap, h % 4, rng));
  }
  std::vector<HostItem> items;
  for (int i = 0; i < 200; ++i) {
    const int h = static_cast<int>(rng() % hists.size());  // repeats: items of one histogram chain
    const HostHistogram& hh = hists[h];
    const uint32_t choice = rng() % 10;
    const size_t n = choice == 0 ? 0 : choice == 1 ? 1 : choice == 2 ? Scaled(1u << 16) : rng() % Scaled(70000);
    std::vector<uint32_t> v(n);
    const workload::ClusterSpec spec{float(rng() % hh.rows), float(rng() % hh.cols), 3.f, 30.f, 0.1f};
    const uint64_t seed = rng();
    for (size_t k = 0; k < n; ++k)
      v[k] = i % 2 ? workload::UniformSample(seed, k, hh.rows * hh.cols)
                   : workload::ClusterSample(seed, k, hh.rows, hh.cols, spec);
    items.push_back(Indices(h, std::move(v)));
  }
  CompareResident(hists, items, "many histograms");
  CompareResident(hists, items, "many histograms misaligned", 3, 5);
}

TEST(CudaHistogramClusterResident, EdgeShapesCountsCapsAndPairs) {
  HISTD_REQUIRE_GPU();
  std::mt19937_64 rng(TestSeed() ^ 4);
  const uint32_t wide = LeanSweep() ? 1031 : 8193;  // lean: still wider than a block's shared memory
  const uint32_t shapes[][2] = {{1, 1}, {1, 3}, {3, 1}, {1, 100003}, {100003, 1}, {37, 101}, {255, wide}};
  const uint8_t caps[] = {1, 2, 254, 255};
  const size_t counts[] = {0, 1, 2, 3, 5, 1023, 1025, 12345};
  std::vector<HostHistogram> hists;
  std::vector<HostItem> items;
  for (const auto& s : shapes) {
    for (uint8_t cap : caps) {
      const int h = static_cast<int>(hists.size());
      hists.push_back(Hist(s[0], s[1], cap, h % 4, rng));
      const uint32_t bins = s[0] * s[1];
      for (size_t n : counts) {
        std::vector<uint32_t> idx(n);
        for (auto& x : idx) {
          const uint32_t r = rng() % 8;
          x = r == 0 ? bins - 1 : r == 1 ? 0 : r == 2 ? bins / 2 : static_cast<uint32_t>(rng() % bins);
        }
        items.push_back(Indices(h, std::move(idx)));
      }
      // (x, y) pairs on the same histogram, a quarter of them outside an axis.
      HostItem p;
      p.histogram = h;
      p.kind = 1;
      p.x_lo = -1.f, p.x_hi = 3.f, p.y_lo = 10.f, p.y_hi = 12.f;
      std::vector<float> f;
      const size_t pairs = 3001 + rng() % 3;
      for (size_t k = 0; k < pairs; ++k) {
        f.push_back(-1.5f + 5.f * float(rng() % 10000) / 10000.f);
        f.push_back(9.8f + 2.4f * float(rng() % 10000) / 10000.f);
      }
      f.push_back(3.f);  // x == hi: overflow
      f.push_back(11.f);
      f.push_back(-1.f);  // x == lo: first bin
      f.push_back(10.f);
      p.words = FloatWords(f);
      items.push_back(std::move(p));
    }
  }
  CompareResident(hists, items, "edge shapes");
  CompareResident(hists, items, "edge shapes misaligned", 1, 1);
}

TEST(CudaHistogramClusterResident, HistogramOfSeveralPasses) {
  HISTD_REQUIRE_GPU();
  std::mt19937_64 rng(TestSeed() ^ 5);
  // 5M bins: more than one pass for every config (3.3M lanes per pass at most).
  const uint32_t bins = 5u << 20;
  std::vector<HostHistogram> hists = {Hist(1, bins, 200, 1, rng), Hist(2, bins / 2, 255, 0, rng)};
  std::vector<uint32_t> a(Scaled(1u << 20)), b(Scaled(1u << 18, 1024), bins - 1);
  for (size_t i = 0; i < a.size(); ++i) a[i] = workload::UniformSample(TestSeed() + 11, i, bins);
  for (size_t i = 0; i < b.size(); i += 3) b[i] = static_cast<uint32_t>(rng() % bins);
  std::vector<HostItem> items = {Indices(0, a), Indices(1, b), Indices(0, std::vector<uint32_t>(300, bins / 2))};
  CompareResident(hists, items, "several passes");
  CompareResident(hists, items, "several passes misaligned", 2, 3);
}

TEST(CudaHistogramClusterResident, CanImplementAndDispatchRule) {
  HISTD_REQUIRE_GPU();
  using cuda::HistogramVariant;
  cuda::HistogramAccumulateArgs a;
  a.work = reinterpret_cast<cuda::HistogramWork*>(uintptr_t{256});
  a.outflow = reinterpret_cast<cuda::HistogramOutflow*>(uintptr_t{512});
  a.samples = reinterpret_cast<const uint32_t*>(uintptr_t{1024});
  a.work_count = 3;
  a.total_samples = 10;
  HistogramVariantOptions o;
  o.cluster_resident = true;
  EXPECT_TRUE(HistogramVariant::can_implement(a, o).ok());
  EXPECT_GE(HistogramVariant::get_workspace_size(a, o), (2 * 3 + 1) * sizeof(uint32_t));
  o.config = hg::kClusterResidentConfigCount;
  EXPECT_EQ(HistogramVariant::can_implement(a, o).code(), absl::StatusCode::kInvalidArgument);
  o.config = -1;
  a.work_count = hg::kClusterResidentMaxItems + 1;
  EXPECT_EQ(HistogramVariant::can_implement(a, o).code(), absl::StatusCode::kInvalidArgument);
  a.work_count = 3;
  for (int c = 0; c < hg::kClusterResidentConfigCount; ++c) {
    o.config = c;
    a.total_samples = uint64_t{1} << 32;
    const bool wide = hg::kClusterResidentConfigs[c].lane == hg::ResidentLane::k32Red;
    EXPECT_EQ(HistogramVariant::can_implement(a, o).ok(), !wide) << "config " << c;
  }
  // The dispatch rule: Roulo-shaped lists qualify, service-shaped ones do not.
  EXPECT_TRUE(hg::PreferClusterResident(64ull << 20, 64));
  EXPECT_FALSE(hg::PreferClusterResident(1024ull << 16, 1024));
  EXPECT_FALSE(hg::PreferClusterResident(0, 0));
  EXPECT_FALSE(hg::PreferClusterResident(uint64_t{1} << 40, hg::kClusterResidentMaxItems + 1));
}

}  // namespace
}  // namespace histd::testing
