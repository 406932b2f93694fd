// HostBufferPool: buffers are reused, at most max_idle stay pooled, and each has the size asked.
#include "server/core/host_buffer_pool.h"

#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <vector>

#include "engine/engine_factory.h"

namespace histd::server {
namespace {

std::unique_ptr<Engine> CpuEngine() {
  EngineOptions o;
  o.kind = EngineKind::kCpu;
  o.cpu_threads = 1;
  absl::StatusOr<std::unique_ptr<Engine>> engine = MakeEngine(o);
  EXPECT_TRUE(engine.ok()) << engine.status();
  return *std::move(engine);
}

TEST(HostBufferPoolTest, AReturnedBufferIsHandedOutAgain) {
  std::unique_ptr<Engine> engine = CpuEngine();
  HostBufferPool pool(engine.get(), 4096, 2);
  EXPECT_EQ(pool.buffer_bytes(), 4096u);
  uint8_t* first = nullptr;
  {
    absl::StatusOr<HostBufferPool::Lease> lease = pool.Acquire();
    ASSERT_TRUE(lease.ok());
    first = lease->data();
    std::memset(first, 0xAB, 4096);  // the whole size is usable
  }
  absl::StatusOr<HostBufferPool::Lease> again = pool.Acquire();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->data(), first);
  // Not freed and reallocated at the same address: the allocator would have reused (or
  // the kernel zeroed) the memory, and the pattern would be gone.
  std::vector<uint8_t> pattern(4096, 0xAB);
  EXPECT_EQ(std::memcmp(again->data(), pattern.data(), pattern.size()), 0);
}

TEST(HostBufferPoolTest, ConcurrentLeasesAreDistinctAndOnlyMaxIdleStayPooled) {
  std::unique_ptr<Engine> engine = CpuEngine();
  HostBufferPool pool(engine.get(), 1024, 2);
  std::set<uint8_t*> first_round;
  {
    std::vector<HostBufferPool::Lease> leases;
    for (int i = 0; i < 3; ++i) {
      absl::StatusOr<HostBufferPool::Lease> lease = pool.Acquire();
      ASSERT_TRUE(lease.ok());
      first_round.insert(lease->data());
      leases.push_back(*std::move(lease));
    }
    EXPECT_EQ(first_round.size(), 3u);
  }  // all three returned: two kept, one freed
  // The two pooled buffers come back first (the third is new; the allocator may place it
  // where the freed one was, so its address proves nothing).
  std::vector<HostBufferPool::Lease> leases;
  for (int i = 0; i < 3; ++i) {
    absl::StatusOr<HostBufferPool::Lease> lease = pool.Acquire();
    ASSERT_TRUE(lease.ok());
    if (i < 2) EXPECT_EQ(first_round.count(lease->data()), 1u) << "lease " << i;
    leases.push_back(*std::move(lease));
  }
  EXPECT_NE(leases[0].data(), leases[1].data());
}

}  // namespace
}  // namespace histd::server
