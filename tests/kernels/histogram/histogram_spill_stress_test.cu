// Stress for the neighbour-spill trap (issue 3): many samples racing on adjacent bins of one
// 32-bit word, starting near and at the cap, from many blocks at once (many work items on
// one histogram), through the window lanes, the global CAS path, and both mixed. A byte
// that wrapped past 255 would carry into its neighbour; a 16-bit lane that overflowed would
// carry into the next lane. Every bin must end exactly at min(cap, start + hits).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "tests/kernels/histogram/histogram_test_util.h"

namespace histd::testing {
namespace {

// One 1 x 16 histogram per cap; bins 4..7 (one word when aligned) start at cap-3, cap-1,
// cap, cap-2 (clamped at 0); samples hammer bins 3..8 (the hot word and its neighbours).
void AdjacentBinsCase(uint32_t misalign, const std::string& what) {
  std::mt19937_64 rng(TestSeed() ^ misalign);
  std::vector<HostHistogram> hists;
  std::vector<HostItem> items;
  const uint8_t caps[] = {1, 2, 3, 128, 253, 254, 255};
  for (uint8_t cap : caps) {
    HostHistogram h;
    h.rows = 1, h.cols = 16, h.cap = cap;
    h.bins.resize(16);
    for (auto& b : h.bins) b = static_cast<uint8_t>(rng() % (cap + 1u));
    const int starts[4] = {cap - 3, cap - 1, cap, cap - 2};
    for (int k = 0; k < 4; ++k) h.bins[4 + k] = static_cast<uint8_t>(starts[k] < 0 ? 0 : starts[k]);
    const int hi = static_cast<int>(hists.size());
    hists.push_back(h);
    for (int item = 0; item < 24; ++item) {  // 24 concurrent batches on the same histogram
      HostItem it;
      it.histogram = hi;
      it.words.resize(Scaled(40000, 1024) + item);
      for (auto& w : it.words) {
        const uint32_t r = rng() % 16;
        w = r < 12 ? 4 + (r & 3) : r < 14 ? 3 : 8;
      }
      items.push_back(std::move(it));
    }
  }
  const HarnessResult want = RunReference(hists, items);
  for (const auto& [name, options] : ExactOptionSweep()) {
    ExpectSameResult(want, RunHarness(hists, items, options, misalign), what + " [" + name + "]");
  }
}

TEST(CudaHistogramSpillStress, AdjacentBinsOfOneWordNearAndAtCap) {
  HISTD_REQUIRE_GPU();
  for (uint32_t misalign : {0u, 1u, 2u, 3u})  // 1..3: the hot bins straddle a word boundary
    AdjacentBinsCase(misalign, "adjacent bins misalign " + std::to_string(misalign));
}

// Two hot words far apart in a large histogram: a 4096-bin window can hold only one, so the
// other is hammered through global CAS while its neighbours sit one below the cap.
TEST(CudaHistogramSpillStress, HotWordsOutsideTheWindow) {
  HISTD_REQUIRE_GPU();
  std::mt19937_64 rng(TestSeed() ^ 77);
  HostHistogram h;
  h.rows = 256, h.cols = 8192, h.cap = 255;
  h.bins.assign(256 * 8192, 0);
  const uint32_t a = 10 * 8192 + 100, b = 200 * 8192 + 8000;  // both word-aligned
  for (uint32_t k = 0; k < 4; ++k) {
    h.bins[a + k] = static_cast<uint8_t>(252 + k);
    h.bins[b + k] = static_cast<uint8_t>(251 + k);
  }
  h.bins[a - 1] = 254;
  h.bins[b + 4] = 254;
  std::vector<HostItem> items;
  for (int i = 0; i < 16; ++i) {
    HostItem it;
    it.words.resize(Scaled(1u << 16, 1024));
    for (auto& w : it.words) w = (rng() % 2 ? a : b) + static_cast<uint32_t>(rng() % 4);
    items.push_back(std::move(it));
  }
  const HarnessResult want = RunReference({h}, items);
  cuda::HistogramVariantOptions o;
  o.strategy = cuda::HistogramStrategy::kHotWindow;  // kAuto skips the window this small
  o.max_window_bins = 4096;
  ExpectSameResult(want, RunHarness({h}, items, o), "two hot words, window 4096");
  o.strategy = cuda::HistogramStrategy::kGlobalOnly;
  ExpectSameResult(want, RunHarness({h}, items, o), "two hot words, global only");
  o.strategy = cuda::HistogramStrategy::kBucketed;  // 16 items' units of one slice share its lock
  ExpectSameResult(want, RunHarness({h}, items, o), "two hot words, bucketed");
}

// Millions of hits on the two 16-bit lanes of one shared word: the lanes must stop at the
// cap exactly and never carry (2^23 hits > 65535).
TEST(CudaHistogramSpillStress, SixteenBitLanesNeverCarry) {
  HISTD_REQUIRE_GPU();
  std::vector<HostHistogram> hists(2);
  hists[0].rows = 1, hists[0].cols = 2, hists[0].cap = 255, hists[0].bins = {0, 254};
  hists[1].rows = 1, hists[1].cols = 1, hists[1].cap = 200, hists[1].bins = {0};
  HostItem both, one;
  both.histogram = 0;
  const size_t hits = Scaled(1u << 23, 1u << 18);  // > 2 x 65535 at any scale
  for (uint32_t i = 0; i < hits; ++i) both.words.push_back(i & 1);
  one.histogram = 1;
  one.words.assign(hits, 0);
  const HarnessResult want = RunReference(hists, {both, one});
  cuda::HistogramVariantOptions big_tiles;
  big_tiles.strategy = cuda::HistogramStrategy::kHotWindow;
  big_tiles.tile_samples = 1u << 24;  // one block takes all 2^23 hits of an item
  ExpectSameResult(want, RunHarness(hists, {both, one}, big_tiles), "lanes, one tile");
  ExpectSameResult(want, RunHarness(hists, {both, one}, {}), "lanes, default tiles");
  cuda::HistogramVariantOptions bucketed;  // a unit of 2^23 entries: accept-by-old-value lanes
  bucketed.strategy = cuda::HistogramStrategy::kBucketed;
  ExpectSameResult(want, RunHarness(hists, {both, one}, bucketed), "lanes, bucketed");
}

}  // namespace
}  // namespace histd::testing
