// Parts of the deferred-miss fold (deferred_fold_parts.cuh) checked on their own, against host
// references, on inputs the whole-kernel tests reach only in part:
// - MergeWordFromLanes: lanes above 255 up to its domain's bound (unclamped plain adds),
//   bytes already above cap, every cap from 1 to 255;
// - FindUnitItem: items with no units anywhere in the list (runs of equal starts), lists
//   around the 32-way search's boundaries, and the kernel's forward-only search.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/common/device_buffer.h"
#include "kernels/histogram/deferred_fold_parts.cuh"
#include "tests/kernels/gpu_test_util.h"
#include "tests/kernels/histogram/histogram_test_util.h"

namespace histd::testing {
namespace {

namespace hg = cuda::histogram;

__global__ void MergeWordsKernel(const uint32_t* g, const uint32_t* la, const uint32_t* lb, const uint32_t* cap,
                                 uint32_t* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = hg::MergeWordFromLanes(g[i], la[i], lb[i], cap[i] * 0x00010001u);
}

// Byte k of the result: max(b, min(cap, b + min(cap, lane k))).
uint32_t MergeWordReference(uint32_t g, uint32_t la, uint32_t lb, uint32_t cap) {
  const uint32_t lane[4] = {la & 0xFFFFu, la >> 16, lb & 0xFFFFu, lb >> 16};
  uint32_t out = 0;
  for (int k = 0; k < 4; ++k) {
    const uint32_t b = (g >> (8 * k)) & 0xFFu;
    const uint32_t r = std::max(b, std::min(cap, b + std::min(cap, lane[k])));
    out |= r << (8 * k);
  }
  return out;
}

TEST(CudaDeferredFoldParts, MergeWordFromLanesMatchesTheSaturatingAdd) {
  HISTD_REQUIRE_GPU();
  std::mt19937_64 rng(TestSeed());
  // The domain's edge included: every lane a merge reads is at most kMaxMergeLane.
  const uint32_t edge_lanes[] = {0, 1, 2, 127, 128, 254, 255, 256, 511, 4096, hg::kMaxMergeLane - 1, hg::kMaxMergeLane};
  const int n = 1 << 18;
  std::vector<uint32_t> g(n), la(n), lb(n), cap(n);
  auto lane = [&] {
    const uint64_t r = rng();
    return (r & 3) == 0 ? static_cast<uint32_t>(r >> 16) % (hg::kMaxMergeLane + 1)
                        : edge_lanes[(r >> 8) % (sizeof(edge_lanes) / sizeof(edge_lanes[0]))];
  };
  for (int i = 0; i < n; ++i) {
    cap[i] = i < 255 ? static_cast<uint32_t>(i + 1) : 1 + static_cast<uint32_t>(rng() % 255);
    uint32_t word = 0;
    for (int k = 0; k < 4; ++k) {  // bytes below, at and above cap
      const uint64_t r = rng();
      const uint32_t b = (r & 1) ? static_cast<uint32_t>(r >> 8) & 0xFFu
                                 : std::min<uint32_t>(255, cap[i] + static_cast<uint32_t>((r >> 8) % 3) - 1);
      word |= b << (8 * k);
    }
    g[i] = word;
    la[i] = lane() | (lane() << 16);
    lb[i] = lane() | (lane() << 16);
  }
  const size_t bytes = size_t{n} * 4;
  auto d_g = cuda::DeviceBuffer::Allocate(bytes).value();
  auto d_la = cuda::DeviceBuffer::Allocate(bytes).value();
  auto d_lb = cuda::DeviceBuffer::Allocate(bytes).value();
  auto d_cap = cuda::DeviceBuffer::Allocate(bytes).value();
  auto d_out = cuda::DeviceBuffer::Allocate(bytes).value();
  ASSERT_EQ(cudaMemcpy(d_g.get(), g.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_la.get(), la.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_lb.get(), lb.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_cap.get(), cap.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  PoisonDevice(d_out.get(), bytes);
  MergeWordsKernel<<<n / 256, 256>>>(d_g.as<uint32_t>(), d_la.as<uint32_t>(), d_lb.as<uint32_t>(),
                                     d_cap.as<uint32_t>(), d_out.as<uint32_t>(), n);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<uint32_t> out(n);
  ASSERT_EQ(cudaMemcpy(out.data(), d_out.get(), bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  int wrong = 0;
  for (int i = 0; i < n && wrong < 5; ++i) {
    const uint32_t want = MergeWordReference(g[i], la[i], lb[i], cap[i]);
    if (out[i] != want) {
      ++wrong;
      ADD_FAILURE() << std::hex << "g " << g[i] << " lanes " << la[i] << " " << lb[i] << " cap " << std::dec
                    << cap[i] << ": got " << std::hex << out[i] << ", want " << want;
    }
  }
}

// As FoldDeferredBlock walks its units: block b takes units b, b + grid, ..., one warp
// searching forward from the previous unit's item.
__global__ void FindItemsKernel(const uint32_t* unit_start, int work_count, int* out) {
  const uint32_t units = unit_start[work_count];
  int item = 0;
  for (uint32_t u = blockIdx.x; u < units; u += gridDim.x) {
    item = hg::FindUnitItem(unit_start, work_count, item, u, static_cast<int>(threadIdx.x));
    if (threadIdx.x == 0) out[u] = item;
  }
}

TEST(CudaDeferredFoldParts, FindUnitItemFindsTheItemThatOwnsEachUnit) {
  HISTD_REQUIRE_GPU();
  std::mt19937_64 rng(TestSeed() ^ 0x5EEDu);
  for (int work_count : {1, 2, 31, 32, 33, 1000, 1025, 5000}) {
    // Units per item: zero for about a third (including the first and last items), else 1..40.
    std::vector<uint32_t> start(work_count + 1, 0);
    for (int i = 0; i < work_count; ++i) {
      const bool empty = (i == 0 || i == work_count - 1 || rng() % 3 == 0) && work_count > 2;
      start[i + 1] = start[i] + (empty ? 0u : 1u + static_cast<uint32_t>(rng() % 40));
    }
    const uint32_t units = start[work_count];
    ASSERT_GT(units, 0u) << work_count;
    auto d_start = cuda::DeviceBuffer::Allocate(start.size() * 4).value();
    auto d_out = cuda::DeviceBuffer::Allocate(size_t{units} * 4).value();
    ASSERT_EQ(cudaMemcpy(d_start.get(), start.data(), start.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
    for (int grid : {1, 7, 132}) {
      PoisonDevice(d_out.get(), size_t{units} * 4);
      FindItemsKernel<<<grid, 32>>>(d_start.as<uint32_t>(), work_count, d_out.as<int>());
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      std::vector<int> out(units);
      ASSERT_EQ(cudaMemcpy(out.data(), d_out.get(), size_t{units} * 4, cudaMemcpyDeviceToHost), cudaSuccess);
      for (uint32_t u = 0; u < units; ++u) {
        // The owner: the last item whose first unit is <= u (it has start[i + 1] > u).
        const int want = static_cast<int>(std::upper_bound(start.begin(), start.end() - 1, u) - start.begin()) - 1;
        ASSERT_EQ(out[u], want) << "unit " << u << " of " << units << ", " << work_count << " items, grid " << grid;
        ASSERT_LT(u, start[want + 1]);
      }
    }
  }
}

}  // namespace
}  // namespace histd::testing
