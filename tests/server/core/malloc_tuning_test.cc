// SetMallocArenaMax: the allocator setting histd's main applies before its threads start.
#include "server/core/malloc_tuning.h"

#include <gtest/gtest.h>

namespace histd::server {
namespace {

TEST(MallocTuningTest, ZeroKeepsTheDefaultAndAPositiveCapIsAccepted) {
  EXPECT_TRUE(SetMallocArenaMax(0));
#if defined(__GLIBC__)
  EXPECT_TRUE(SetMallocArenaMax(2));
  EXPECT_TRUE(SetMallocArenaMax(8));  // restore a roomier cap for the other tests
#else
  EXPECT_FALSE(SetMallocArenaMax(2));
#endif
}

}  // namespace
}  // namespace histd::server
