// ChooseTileSamples (kernels/histogram/tuning.h): the hot-window launch's tile, from the launch's
// size alone, for the shapes the benchmark measured on the H100 (132 SMs, one block each).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>

#include "kernels/histogram/tuning.h"

namespace histd::cuda::histogram {
namespace {

constexpr uint32_t kConfigTile = 1u << 18;
constexpr int64_t kH100Blocks = 132;

uint32_t Choose(uint64_t total, int items, int64_t blocks = kH100Blocks, int cluster = 1) {
  return ChooseTileSamples(kConfigTile, cluster, total, items, blocks);
}

TEST(TileChoice, RouloLaunchFillsTheGpuInOneWave) {
  // 64 histograms of 2^20 samples: 2^19 gives 128 tiles (one wave); 2^18 needs two waves,
  // 2^20 leaves half the SMs idle.
  EXPECT_EQ(Choose(uint64_t{64} << 20, 64), 1u << 19);
}

TEST(TileChoice, MediumLaunchTakesSmallerTilesToFillTheGpu) {
  EXPECT_EQ(Choose(uint64_t{16} << 20, 16), 1u << 17);  // 128 tiles
  EXPECT_EQ(Choose(uint64_t{1} << 18, 1), kMinAdaptiveTileSamples);  // one 1 MiB message
}

TEST(TileChoice, ItemsSmallerThanATileTakeWholeItemsWhateverTheTile) {
  // The service shape: 1024 batches of 2^16 samples. Every tile >= 2^16 gives the same plan,
  // and the larger one is kept; a smaller tile only adds per-tile overhead.
  EXPECT_GE(Choose(uint64_t{1024} << 16, 1024), 1u << 16);
}

TEST(TileChoice, HugeLaunchTakesTheLargestTile) {
  EXPECT_EQ(Choose(uint64_t{4096} << 20, 4096), kMaxAdaptiveTileSamples);
}

TEST(TileChoice, NoDeviceOrNoWorkKeepsTheConfigTile) {
  EXPECT_EQ(Choose(uint64_t{64} << 20, 64, 0), kConfigTile);
  EXPECT_EQ(Choose(0, 0), kConfigTile);
}

TEST(TileChoice, ClusteredConfigsCountPlanTilesPerCluster) {
  // Clusters of 4 blocks: 33 groups on 132 SMs; 64 x 2^20 samples in plan tiles of
  // 4 x 2^17 = 2^19 give 128 plan tiles, 4 waves; 4 x 2^18 give 64, 2 waves (cheaper).
  EXPECT_EQ(Choose(uint64_t{64} << 20, 64, kH100Blocks, 4), 1u << 18);
}

TEST(TileChoice, AlwaysAPowerOfTwoWithinTheBounds) {
  std::mt19937_64 rng(std::random_device{}());
  for (int i = 0; i < 2000; ++i) {
    const int items = 1 + static_cast<int>(rng() % 5000);
    const uint64_t total = rng() % (uint64_t{1} << 34);
    const int64_t blocks = 1 + static_cast<int64_t>(rng() % 512);
    const uint32_t t = Choose(total, items, blocks, 1 << (rng() % 4));
    ASSERT_GE(t, kMinAdaptiveTileSamples);
    ASSERT_LE(t, kMaxAdaptiveTileSamples);
    ASSERT_EQ(t & (t - 1), 0u) << t;
  }
}

}  // namespace
}  // namespace histd::cuda::histogram
