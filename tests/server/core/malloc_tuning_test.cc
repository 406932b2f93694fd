// The allocator settings histd's main applies before its threads start
// (server/core/malloc_tuning.h).
#include "server/core/malloc_tuning.h"

#include <sys/resource.h>

#include <cstring>
#include <vector>

#include <gtest/gtest.h>

namespace histd::server {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kGlibcHeap = false;  // the sanitizer's allocator ignores mallopt
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kGlibcHeap = false;
#else
constexpr bool kGlibcHeap = true;
#endif
#else
constexpr bool kGlibcHeap = true;
#endif

TEST(MallocTuningTest, ZeroKeepsTheDefaultAndAPositiveCapIsAccepted) {
  EXPECT_TRUE(SetMallocArenaMax(0));
#if defined(__GLIBC__)
  EXPECT_TRUE(SetMallocArenaMax(2));
  EXPECT_TRUE(SetMallocArenaMax(8));  // restore a roomier cap for the other tests
#else
  EXPECT_FALSE(SetMallocArenaMax(2));
#endif
}

long MinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_minflt;
}

// Touches 40 MiB in 64 KiB blocks (heap, not mmap), frees them all, and counts the page
// faults of touching 40 MiB again.
long FaultsOfReusing40MiB() {
  constexpr size_t kBlock = 64 << 10, kBlocks = 640;
  std::vector<char*> blocks;
  for (size_t i = 0; i < kBlocks; ++i) {
    blocks.push_back(static_cast<char*>(malloc(kBlock)));
    std::memset(blocks.back(), 1, kBlock);
  }
  for (size_t i = kBlocks; i-- > 0;) free(blocks[i]);
  const long before = MinorFaults();
  for (size_t i = 0; i < kBlocks; ++i) {
    blocks[i] = static_cast<char*>(malloc(kBlock));
    std::memset(blocks[i], 2, kBlock);
  }
  const long faults = MinorFaults() - before;
  for (size_t i = kBlocks; i-- > 0;) free(blocks[i]);
  return faults;
}

TEST(MallocTuningTest, ATrimThresholdKeepsFreedPagesForTheNextAllocations) {
  EXPECT_TRUE(SetMallocTrimThreshold(0));
#if defined(__GLIBC__)
  ASSERT_TRUE(SetMallocTrimThreshold(kDefaultMallocTrimThreshold));
  if (!kGlibcHeap) GTEST_SKIP() << "the sanitizer's allocator ignores glibc's settings";
  FaultsOfReusing40MiB();  // the heap grows to its size once
  // 10,240 pages: each would fault again had the free top been returned to the kernel.
  EXPECT_LT(FaultsOfReusing40MiB(), 500);
#else
  EXPECT_FALSE(SetMallocTrimThreshold(kDefaultMallocTrimThreshold));
#endif
}

}  // namespace
}  // namespace histd::server
