// The bucketed strategy's shape and workspace (host arithmetic, no GPU): slices and tiles
// round up, the 4M-bin bucketing limit is where the header ends, and the launch's record
// bound covers every split of the samples over items.
#include "kernels/histogram/bucketed_layout.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "experiments/histogram/tuning_candidates.h"

namespace histd::cuda::histogram {
namespace {

TEST(BucketedLayout, SlicesAndTilesRoundUp) {
  EXPECT_EQ(BucketSlices(1), 1u);
  EXPECT_EQ(BucketSlices(kBucketSliceBins), 1u);
  EXPECT_EQ(BucketSlices(kBucketSliceBins + 1), 2u);
  EXPECT_EQ(BucketSlices(256ull * 8192), 128u);  // Roulo's histogram
  EXPECT_EQ(BucketTiles(0), 0u);
  EXPECT_EQ(BucketTiles(1), 1u);
  EXPECT_EQ(BucketTiles(kBucketTileSamples), 1u);
  EXPECT_EQ(BucketTiles(kBucketTileSamples + 1), 2u);
  EXPECT_EQ(BucketTiles(uint64_t{1} << 18), 128u);  // one 1 MiB ingest message
}

TEST(BucketedLayout, HistogramsUpToTheHeaderAreBucketed) {
  const uint64_t limit = uint64_t{kBucketMaxSlices} * kBucketSliceBins;  // 4M bins
  EXPECT_TRUE(BucketsItem(limit));
  EXPECT_FALSE(BucketsItem(limit + 1));
  EXPECT_EQ(BucketSlices(limit), kBucketMaxSlices);  // every slice has its end in the header
  EXPECT_EQ(kBucketHeaderBytes, 2 * kBucketMaxSlices);
  EXPECT_EQ(kBucketRecordBytes, kBucketHeaderBytes + 2 * kBucketTileSamples);
}

// The host sizes the records from total_samples and work_count only; the kernel's plan has
// sum over items of ceil(count / tile) tiles. Any split must fit.
TEST(BucketedLayout, RecordsCoverEverySplitOverItems) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    const int items = 1 + static_cast<int>(rng() % 1024);
    const uint64_t total = rng() % (uint64_t{1} << 23);
    std::vector<uint64_t> counts(items, 0);
    uint64_t left = total;
    for (int i = 0; i + 1 < items && left > 0; ++i) {
      // Mostly tiny counts (many partial tiles), sometimes a large share.
      const uint64_t c = rng() % 4 == 0 ? rng() % (left + 1) : rng() % 3;
      counts[i] = c < left ? c : left;
      left -= counts[i];
    }
    counts[items - 1] += left;
    uint64_t tiles = 0;
    for (uint64_t c : counts) tiles += BucketTiles(c);
    const BucketedLayout l = BucketedLayout::For(total, items);
    ASSERT_GE(l.tiles, tiles) << "items " << items << " total " << total;
    EXPECT_EQ(l.end, size_t{kBucketRecordBytes} * l.tiles);
  }
}

// Every bin of a bucketed histogram has exactly one (slice, lane), lane < 2^slice_shift,
// and Bin() inverts it; contiguous maps are plain slices of 2^slice_shift bins. Full and
// half-size slices (the latter up to 2M bins), several granules.
TEST(BucketedLayout, SliceMapsAreBijections) {
  const uint64_t shapes[] = {1, 16, kBucketSliceBins, kBucketSliceBins + 1, 1000ull * 1000, 256ull * 8192,
                             3 * kBucketSliceBins + 77, uint64_t{kBucketMaxSlices} * kBucketSliceBins};
  struct Variant {
    bool aligned;
    int slice_shift;
    uint32_t granule_shift;
  };
  const Variant variants[] = {{false, kBucketSliceShift, 6}, {true, kBucketSliceShift, 6}, {true, kBucketSliceShift, 4},
                              {true, kBucketSliceShift, 14}, {false, kBucketSmallSliceShift, 6},
                              {true, kBucketSmallSliceShift, 6}};
  for (uint64_t bins : shapes) {
    for (const Variant& v : variants) {
      if (BucketSlices(bins, v.slice_shift) > kBucketMaxSlices) continue;  // not bucketed this way
      const BucketSliceMap m = BucketSliceMap::For(bins, v.aligned, v.slice_shift, v.granule_shift);
      const uint32_t slices = BucketSlices(bins, v.slice_shift), lanes = 1u << v.slice_shift;
      const std::string what = std::to_string(bins) + " bins, slice shift " + std::to_string(v.slice_shift) +
                               ", granule shift " + std::to_string(v.granule_shift);
      EXPECT_EQ(m.Interleaved(), v.aligned && slices > 1) << what;
      if (m.Interleaved()) {
        EXPECT_GE(m.units, slices) << what;
        EXPECT_LT(m.units, 2 * slices) << what;
        EXPECT_EQ(m.units & (m.units - 1), 0u) << what;
        EXPECT_EQ(m.rotation % 2, 1u) << what;
      } else {
        EXPECT_EQ(m.units, slices) << what;
      }
      std::vector<uint8_t> seen(size_t{m.units} * lanes, 0);
      for (uint64_t b = 0; b < bins; ++b) {
        const uint32_t bin = static_cast<uint32_t>(b), slice = m.Slice(bin), lane = m.Lane(bin);
        ASSERT_LT(slice, m.units) << what << ": bin " << b;
        ASSERT_LT(lane, lanes) << what << ": bin " << b;
        if (!m.Interleaved()) {
          ASSERT_EQ(slice, bin >> v.slice_shift);
          ASSERT_EQ(lane, bin & (lanes - 1));
        }
        ASSERT_EQ(m.Bin(slice, lane), bin) << what << ": bin " << b;
        uint8_t& s = seen[size_t{slice} * lanes + lane];
        ASSERT_EQ(s, 0) << what << ": two bins share slice " << slice << " lane " << lane;
        s = 1;
      }
    }
  }
}

// Half-size slices only when the launch's histograms leave half its blocks without a unit,
// and only for histograms of at most 256 such slices.
TEST(BucketedLayout, HalfSizeSlicesWhenBlocksWouldIdle) {
  EXPECT_EQ(ChooseBucketSliceShift(128, 264, 256ull * 8192), kBucketSmallSliceShift);  // 8 messages, one histogram
  EXPECT_EQ(ChooseBucketSliceShift(128, 132, 256ull * 8192), kBucketSliceShift);       // one message
  EXPECT_EQ(ChooseBucketSliceShift(1024, 264, 256ull * 8192), kBucketSliceShift);      // 8 histograms
  EXPECT_EQ(ChooseBucketSliceShift(132, 264, 256ull * 8192), kBucketSmallSliceShift);
  EXPECT_EQ(ChooseBucketSliceShift(133, 264, 256ull * 8192), kBucketSliceShift);
  EXPECT_EQ(ChooseBucketSliceShift(1, 264, 256ull * 8192 + 1), kBucketSliceShift);  // would need 257 slices
}

// A 16-byte chunk of an interleaved slice (lanes 16t .. 16t + 15) is 16 consecutive bins
// starting at a multiple of 16: one writer per chunk of an aligned histogram.
TEST(BucketedLayout, InterleavedChunksAreWhole) {
  const BucketSliceMap m = BucketSliceMap::For(256ull * 8192, true);
  ASSERT_TRUE(m.Interleaved());
  for (uint32_t slice = 0; slice < m.units; slice += 7)
    for (uint32_t t = 0; t < kBucketSliceBins / 16; ++t) {
      const uint32_t first = m.Bin(slice, 16 * t);
      ASSERT_EQ(first % 16, 0u);
      for (uint32_t q = 1; q < 16; ++q) ASSERT_EQ(m.Bin(slice, 16 * t + q), first + q);
    }
}

TEST(BucketedLayout, ConfigsFitTheTileAndTheLanes) {
  for (const BucketedConfig& c : kBucketedCandidates) {  // production's included
    EXPECT_EQ(kBucketTileSamples % static_cast<uint32_t>(c.threads), 0u) << c.threads;
    EXPECT_GE(static_cast<uint32_t>(c.threads), kBucketMaxSlices) << "one slice counter per thread";
    EXPECT_EQ(kBucketMaxItems % c.threads, 0) << "whole items per thread in the plan";
  }
  // The merge's staging holds a slice's chunks, one more when the histogram is misaligned.
  EXPECT_EQ(kBucketStagedChunks, kBucketSliceBins / 16 + 1);
}

}  // namespace
}  // namespace histd::cuda::histogram
