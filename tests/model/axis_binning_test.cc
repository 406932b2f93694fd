// Exact coordinate binning (model/axis_binning.h) against a rational-arithmetic reference
// (exact_axis_reference.h): every edge of many adversarial axes and its float32
// neighbours, random axes of every scale, subnormals, signed zeros, infinities and NaN;
// then the same inputs through each engine's Apply (the CUDA engine bins on the device),
// bins and flow counters compared exactly.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "model/axis_binning.h"
#include "tests/engine/engine_test_util.h"
#include "tests/model/exact_axis_reference.h"

namespace histd::testing {
namespace {

// AxisBin's codes: NaN is overflow (-2), where the reference says -3.
int64_t ExpectedAxisBin(float v, float lo, float hi, uint32_t n) {
  const int64_t b = ExactAxisBin(v, lo, hi, n);
  return b == -3 ? -2 : b;
}

float FloatFromBits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

TEST(AxisBinningTest, EveryEdgeOfAdversarialAxesIsExact) {
  HISTD_SEEDED_RNG(rng);
  uint64_t checked = 0;
  for (const TestAxis& a : AdversarialAxes()) {
    SCOPED_TRACE(::testing::Message() << "axis [" << a.lo << ", " << a.hi << ") / " << a.bins);
    const float scale = AxisScale(a.lo, a.hi, a.bins);
    for (float v : AdversarialCoordinates(a.lo, a.hi, a.bins, rng)) {
      ASSERT_EQ(AxisBin(v, a.lo, a.hi, scale, a.bins), ExpectedAxisBin(v, a.lo, a.hi, a.bins))
          << "v = " << v << " (0x" << std::hex << [&] {
               uint32_t bits;
               std::memcpy(&bits, &v, 4);
               return bits;
             }() << ")";
      ++checked;
    }
  }
  EXPECT_GT(checked, 100000u);
}

TEST(AxisBinningTest, IssueExamplesLandInTheExactBin) {
  // (x, axis, exact bin): float32 arithmetic put each one bin off.
  struct Case { uint32_t bits; float lo, hi; uint32_t bins; int64_t bin; };
  const Case cases[] = {
      {0xbf426bef, -1.3f, 2.7f, 37, 4},   {0x3fa5b547, -1.3f, 2.7f, 37, 24},
      {0x4000105a, 0.001f, 1000.0f, 1000, 2}, {0x428a007a, 0.001f, 1000.0f, 1000, 68},
      {0x3e20ea0f, 0.1f, 0.3f, 7, 2},     {0x3e999999, 0.1f, 0.7f, 3, 0},
  };
  for (const Case& c : cases) {
    const float v = FloatFromBits(c.bits);
    EXPECT_EQ(ExpectedAxisBin(v, c.lo, c.hi, c.bins), c.bin) << v;
    EXPECT_EQ(AxisBin(v, c.lo, c.hi, AxisScale(c.lo, c.hi, c.bins), c.bins), c.bin) << v;
  }
  // Narrow axes: 5e-39 of [0, 1e-38) / 1000 is bin 500, not 0.
  EXPECT_EQ(AxisBin(5e-39f, 0.0f, 1e-38f, AxisScale(0.0f, 1e-38f, 1000), 1000), 500);
  EXPECT_EQ(AxisBin(9e-39f, 0.0f, 1e-38f, AxisScale(0.0f, 1e-38f, 1000), 1000), 900);
  // Integer edges where float64 alone rounds down (boost-histogram: 14 and 0).
  EXPECT_EQ(AxisBin(15.0f, 0.0f, 22.0f, AxisScale(0.0f, 22.0f, 22), 22), 15);
  EXPECT_EQ(AxisBin(1.0f, 0.0f, 49.0f, AxisScale(0.0f, 49.0f, 49), 49), 1);
  // Just below a zero edge, by the smallest subnormal.
  EXPECT_EQ(AxisBin(-1e-45f, -1.0f, 1.0f, AxisScale(-1.0f, 1.0f, 2), 2), 0);
  EXPECT_EQ(AxisBin(-0.0f, -1.0f, 1.0f, AxisScale(-1.0f, 1.0f, 2), 2), 1);
}

TEST(AxisBinningTest, RandomAxesAndNearEdgeValuesAreExact) {
  HISTD_SEEDED_RNG(rng);
  std::uniform_real_distribution<double> exponent(-44.0, 38.0);
  std::uniform_int_distribution<uint32_t> bins_log(0, 32);
  for (int axis = 0; axis < 300; ++axis) {
    const float lo = static_cast<float>((rng() & 1 ? -1 : 1) * std::pow(10.0, exponent(rng)));
    const float width = static_cast<float>(std::pow(10.0, exponent(rng)));
    const float hi = lo + width;
    if (!(lo < hi) || !std::isfinite(hi)) continue;
    const uint32_t bits = bins_log(rng);
    const uint32_t n = static_cast<uint32_t>(
        std::max<uint64_t>(1, std::min<uint64_t>(UINT32_MAX, (uint64_t{1} << bits) + rng() % 7)));
    SCOPED_TRACE(::testing::Message() << "axis [" << lo << ", " << hi << ") / " << n);
    const float scale = AxisScale(lo, hi, n);
    for (float v : AdversarialCoordinates(lo, hi, n, rng, 64)) {
      ASSERT_EQ(AxisBin(v, lo, hi, scale, n), ExpectedAxisBin(v, lo, hi, n)) << "v = " << v;
    }
    // Random float32 bit patterns inside the axis.
    for (int i = 0; i < 200; ++i) {
      const float v = FloatFromBits(static_cast<uint32_t>(rng()));
      ASSERT_EQ(AxisBin(v, lo, hi, scale, n), ExpectedAxisBin(v, lo, hi, n)) << "v = " << v;
    }
  }
}

class AxisBinningEngineTest : public EngineTest {};
HISTD_INSTANTIATE_ENGINE_TEST(AxisBinningEngineTest);

// Each adversarial axis as the x axis (columns) of a histogram, y a second axis; every
// probe coordinate paired with every kind of y value, applied by the engine.
TEST_P(AxisBinningEngineTest, ApplyBinsEveryAdversarialCoordinateExactly) {
  HISTD_SEEDED_RNG(rng);
  const TestAxis y_axis{-3.0f, 3.0f, 6};
  for (const TestAxis& x_axis : AdversarialAxes()) {
    if (x_axis.bins > 100000) continue;  // the histogram's columns
    SCOPED_TRACE(::testing::Message() << "x axis [" << x_axis.lo << ", " << x_axis.hi << ") / "
                                      << x_axis.bins);
    const std::vector<float> xs = AdversarialCoordinates(x_axis.lo, x_axis.hi, x_axis.bins, rng, 512);
    const std::vector<float> ys = AdversarialCoordinates(y_axis.lo, y_axis.hi, y_axis.bins, rng);
    std::vector<float> xy;
    for (size_t i = 0; i < xs.size(); ++i) {
      xy.push_back(xs[i]);
      xy.push_back(ys[i % ys.size()]);
    }
    for (size_t i = 0; i < ys.size(); ++i) {  // every y value too
      xy.push_back(0.5f * (x_axis.lo + x_axis.hi));
      xy.push_back(ys[i]);
    }
    const uint32_t rows = y_axis.bins, cols = x_axis.bins;
    auto h = NewHistogram(engine(), rows, cols, 255);
    ASSERT_NE(h, nullptr);
    std::vector<uint64_t> hits(uint64_t{rows} * cols, 0);
    IngestItemResult expect;
    for (size_t i = 0; i < xy.size(); i += 2) {
      const int64_t c = ExpectedAxisBin(xy[i], x_axis.lo, x_axis.hi, cols);
      const int64_t r = ExpectedAxisBin(xy[i + 1], y_axis.lo, y_axis.hi, rows);
      expect.x_underflow += c == -1;
      expect.x_overflow += c == -2;
      expect.y_underflow += r == -1;
      expect.y_overflow += r == -2;
      if (c >= 0 && r >= 0) {
        ++expect.binned;
        ++hits[static_cast<uint64_t>(r) * cols + static_cast<uint64_t>(c)];
      }
    }
    auto staging = Stage(engine(), xy.data(), xy.size() * sizeof(float));
    ASSERT_NE(staging, nullptr);
    IngestItem item;
    item.histogram = h.get();
    item.kind = SampleKind::kCoordXY;
    item.count = xy.size() / 2;
    item.x = AxisRange{x_axis.lo, x_axis.hi};
    item.y = AxisRange{y_axis.lo, y_axis.hi};
    ApplyOutcome outcome = ApplyAndWait(engine(), *staging, {item});
    ASSERT_TRUE(outcome.status.ok()) << outcome.status;
    ASSERT_EQ(outcome.results.size(), 1u);
    EXPECT_EQ(outcome.results[0].binned, expect.binned);
    EXPECT_EQ(outcome.results[0].x_underflow, expect.x_underflow);
    // NaN counts as overflow at this layer; the server moves it to x_nan / y_nan.
    EXPECT_EQ(outcome.results[0].x_overflow, expect.x_overflow);
    EXPECT_EQ(outcome.results[0].y_underflow, expect.y_underflow);
    EXPECT_EQ(outcome.results[0].y_overflow, expect.y_overflow);
    const std::vector<uint8_t> got = ReadAll(engine(), *h);
    for (uint64_t i = 0; i < hits.size(); ++i) {
      ASSERT_EQ(got[i], std::min<uint64_t>(hits[i], 255)) << "bin " << i;
    }
  }
}

}  // namespace
}  // namespace histd::testing
