// (x, y) float32 samples: binning on the device with histd::AxisBin must match the CPU
// bit for bit, including axis edges, and under/overflow must be counted per axis.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "tests/kernels/histogram/histogram_test_util.h"

namespace histd::testing {
namespace {

HostItem PairItem(int hist, const std::vector<float>& xy, float x_lo, float x_hi, float y_lo,
                  float y_hi) {
  HostItem it;
  it.histogram = hist;
  it.kind = 1;
  it.words = FloatWords(xy);
  it.x_lo = x_lo;
  it.x_hi = x_hi;
  it.y_lo = y_lo;
  it.y_hi = y_hi;
  return it;
}

// Values that probe one axis [lo, hi): its edges, neighbours of the edges, far outside,
// and every interior bin edge computed in float (where rounding decides the bin).
std::vector<float> AxisProbes(float lo, float hi, uint32_t bins) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> v = {lo, hi, std::nextafter(lo, -inf), std::nextafter(lo, inf),
                          std::nextafter(hi, -inf), std::nextafter(hi, inf), -1e30f, 1e30f,
                          -std::numeric_limits<float>::max(), std::numeric_limits<float>::max(),
                          0.0f, -0.0f, std::numeric_limits<float>::denorm_min()};
  const float width = (hi - lo) / bins;
  for (uint32_t b = 0; b <= bins && b < 300; ++b) {
    const float e = lo + width * b;
    v.push_back(e);
    v.push_back(std::nextafter(e, -inf));
    v.push_back(std::nextafter(e, inf));
  }
  return v;
}

TEST(CudaHistogramXY, AxisEdgesAndOutflow) {
  HISTD_REQUIRE_GPU();
  std::mt19937_64 rng(TestSeed());
  std::vector<HostHistogram> hists(3);
  hists[0].rows = 37, hists[0].cols = 53, hists[0].cap = 255;
  hists[1].rows = 1, hists[1].cols = 1000, hists[1].cap = 2;
  hists[2].rows = 300, hists[2].cols = 1, hists[2].cap = 254;
  for (auto& h : hists) {
    h.bins.resize(uint64_t{h.rows} * h.cols);
    for (auto& b : h.bins) b = static_cast<uint8_t>(rng() % 256);
  }
  const float axes[3][4] = {{-1.5f, 2.25f, 10.f, 20.f}, {0.f, 1.f, -3.f, 3.f}, {-7.f, 1e6f, 0.1f, 0.3f}};
  std::vector<HostItem> items;
  for (int h = 0; h < 3; ++h) {
    const auto& a = axes[h];
    const std::vector<float> xs = AxisProbes(a[0], a[1], hists[h].cols);
    const std::vector<float> ys = AxisProbes(a[2], a[3], hists[h].rows);
    std::vector<float> xy;
    for (size_t i = 0; i < xs.size(); ++i)  // every x probe against a few y probes
      for (size_t j = i % 7; j < ys.size(); j += 7) xy.insert(xy.end(), {xs[i], ys[j]});
    std::uniform_real_distribution<float> ux(a[0] - 0.1f * (a[1] - a[0]), a[1] + 0.1f * (a[1] - a[0]));
    std::uniform_real_distribution<float> uy(a[2] - 0.1f * (a[3] - a[2]), a[3] + 0.1f * (a[3] - a[2]));
    for (int i = 0; i < 50000; ++i) xy.insert(xy.end(), {ux(rng), uy(rng)});
    items.push_back(PairItem(h, xy, a[0], a[1], a[2], a[3]));
    // Smaller items too: counts that are multiples of nothing, one pair, none.
    items.push_back(PairItem(h, std::vector<float>(xy.begin(), xy.begin() + 2 * 1237), a[0], a[1], a[2], a[3]));
    items.push_back(PairItem(h, std::vector<float>(xy.begin(), xy.begin() + 2), a[0], a[1], a[2], a[3]));
    items.push_back(PairItem(h, {}, a[0], a[1], a[2], a[3]));
  }
  const HarnessResult want = RunReference(hists, items);
  // gap 0: 16-byte aligned pairs; 1: only 4-byte aligned (scalar path); 2: 8-byte aligned.
  for (uint32_t gap : {0u, 1u, 2u}) {
    for (const auto& [name, options] : ExactOptionSweep()) {
      const HarnessResult got = RunHarness(hists, items, options, gap, gap);
      ExpectSameResult(want, got, "xy edges gap " + std::to_string(gap) + " [" + name + "]");
    }
  }
}

TEST(CudaHistogramXY, ClusteredPairsMixedWithIndices) {
  HISTD_REQUIRE_GPU();
  std::mt19937_64 rng(TestSeed() ^ 5);
  std::vector<HostHistogram> hists(2);
  for (auto& h : hists) {
    h.rows = 256, h.cols = 8192, h.cap = 255;
    h.bins.assign(256 * 8192, 0);
  }
  hists[1].cap = 7;
  std::normal_distribution<float> gx(3.0f, 0.4f), gy(-1.0f, 0.05f);
  std::vector<float> xy;
  for (size_t i = 0; i < Scaled(1u << 20); ++i) xy.insert(xy.end(), {gx(rng), gy(rng)});
  std::vector<HostItem> items = {PairItem(0, xy, 0.f, 8.f, -1.2f, -0.8f), PairItem(1, xy, 2.f, 4.f, -1.1f, -0.9f)};
  HostItem idx;
  idx.histogram = 1;
  for (size_t i = 0; i < Scaled(300000); ++i) idx.words.push_back(static_cast<uint32_t>(rng() % (256 * 8192)));
  items.push_back(idx);
  const HarnessResult want = RunReference(hists, items);
  EXPECT_GT(want.outflow[1].x_underflow + want.outflow[1].x_overflow, 0u);  // the test means it
  for (const auto& [name, options] : ExactOptionSweep()) {
    ExpectSameResult(want, RunHarness(hists, items, options), "xy clustered [" + name + "]");
  }
}

// Pairs binned into a histogram above the bucketed strategy's 4M bins (updated at once,
// with 64-bit bin offsets) next to one it buckets, in one launch.
TEST(CudaHistogramXY, PairsIntoAHistogramTooLargeToBucket) {
  HISTD_REQUIRE_GPU();
  std::mt19937_64 rng(TestSeed() ^ 6);
  std::vector<HostHistogram> hists(2);
  hists[0].rows = 2048, hists[0].cols = 2049, hists[0].cap = 9;  // 4,196,352 bins
  hists[1].rows = 64, hists[1].cols = 1000, hists[1].cap = 255;
  for (auto& h : hists) h.bins.assign(size_t{h.rows} * h.cols, 0);
  std::normal_distribution<float> g(0.5f, 0.3f);
  std::vector<float> xy;
  for (size_t i = 0; i < Scaled(200000); ++i) xy.insert(xy.end(), {g(rng), g(rng)});
  const std::vector<HostItem> items = {PairItem(0, xy, 0.f, 1.f, 0.f, 1.f), PairItem(1, xy, 0.2f, 0.8f, 0.f, 1.f)};
  const HarnessResult want = RunReference(hists, items);
  EXPECT_GT(want.outflow[0].x_underflow + want.outflow[0].y_overflow, 0u);  // the test means it
  for (const auto& [name, options] : ExactOptionSweep()) {
    ExpectSameResult(want, RunHarness(hists, items, options), "xy large [" + name + "]");
  }
}

}  // namespace
}  // namespace histd::testing
