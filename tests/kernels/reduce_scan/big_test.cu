// More than 2^31 one-byte elements (64-bit offsets everywhere): u8 sums over the whole
// array, its rows and its columns against a host loop; u8 scans checked element by element
// on the device through the defining recurrence out[i] - out[i-1] = x[i]. Skipped (not
// passed) when the device lacks the free memory (about 2.2 GB for the reduce, 20 GB for the
// scan); the H100 has it.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <vector>

#include "kernels/common/cuda_status.h"
#include "kernels/common/device_buffer.h"
#include "kernels/reduce_scan/reduce.h"
#include "kernels/reduce_scan/scan.h"
#include "tests/kernels/gpu_test_util.h"
#include "tests/kernels/reduce_scan/reference.h"

namespace histd::testing::rs {
namespace {

using cuda::DeviceBuffer;

constexpr uint64_t kN = (uint64_t{1} << 31) + 1237;  // past 2^31, a multiple of nothing
constexpr uint64_t kOffset = 3;                      // and misaligned

__host__ __device__ inline uint8_t HashByte(uint64_t i, uint64_t seed) {
  uint64_t z = i + seed * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return static_cast<uint8_t>((z ^ (z >> 31)) >> 56);
}

__global__ void FillKernel(uint8_t* p, uint64_t n, uint64_t seed) {
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x) {
    p[i] = HashByte(i, seed);
  }
}

// Counts elements that break the scan's recurrence; records the first.
__global__ void RecurrenceKernel(const uint8_t* x, const uint64_t* out, uint64_t n, bool inclusive,
                                 unsigned long long* bad, unsigned long long* first_bad) {
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x) {
    const uint64_t before = i == 0 ? 0 : out[i - 1];
    const uint64_t step = inclusive ? x[i] : (i == 0 ? 0 : x[i - 1]);
    if (out[i] != before + step) {
      atomicAdd(bad, 1ull);
      atomicMin(first_bad, static_cast<unsigned long long>(i));
    }
  }
}

bool EnoughFreeMemory(uint64_t bytes) {
  size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) return false;
  return free_bytes > bytes + (uint64_t{1} << 30);
}

absl::Status Sync(const char* what) { return cuda::ToStatus(cudaDeviceSynchronize(), what); }

template <typename Args, typename Op>
absl::Status RunWith(const Args& a) {
  HISTD_RETURN_IF_ERROR(Op::can_implement(a));
  absl::StatusOr<DeviceBuffer> ws = DeviceBuffer::Allocate(Op::get_workspace_size(a));
  if (!ws.ok()) return ws.status();
  if (absl::Status s = Op::run(a, ws->get(), nullptr); !s.ok()) return s;
  return Sync("big op");
}

TEST(CudaReduceScanBig, U8SumsBeyond2To31Elements) {
  HISTD_REQUIRE_GPU();
  if (!EnoughFreeMemory(kN + 4096)) GTEST_SKIP() << "needs ~3.2 GB of free device memory";
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  absl::StatusOr<DeviceBuffer> buf = DeviceBuffer::Allocate(kN + 64);
  ASSERT_TRUE(buf.ok()) << buf.status();
  uint8_t* x = buf->as<uint8_t>() + kOffset;
  FillKernel<<<4096, 256>>>(x, kN, seed);
  ASSERT_TRUE(Sync("fill").ok());
  std::vector<uint8_t> h(kN);
  ASSERT_EQ(cudaMemcpy(h.data(), x, kN, cudaMemcpyDeviceToHost), cudaSuccess);

  // Whole array.
  uint64_t total = 0;
  for (uint64_t i = 0; i < kN; ++i) total += h[i];
  absl::StatusOr<DeviceBuffer> out = DeviceBuffer::Allocate(1024 * sizeof(uint64_t));
  ASSERT_TRUE(out.ok());
  PoisonDevice(out->get(), 1024 * sizeof(uint64_t));
  using RA = cuda::ReduceArgs;
  absl::Status s = RunWith<RA, cuda::DeviceReduce>(RA{x, DType::kU8, 1, kN, ReduceOp::kSum, Dim::kAll, out->get()});
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(CopyBack<uint64_t>(out->get(), 1)[0], total);

  // Three rows of ~716M bytes (one row sum each).
  const uint64_t cols3 = kN / 3;
  std::vector<uint64_t> rows3(3, 0);
  for (uint64_t r = 0; r < 3; ++r) {
    for (uint64_t c = 0; c < cols3; ++c) rows3[r] += h[r * cols3 + c];
  }
  PoisonDevice(out->get(), 1024 * sizeof(uint64_t));
  const absl::Status s2 = RunWith<RA, cuda::DeviceReduce>(RA{x, DType::kU8, 3, cols3, ReduceOp::kSum, Dim::kCols, out->get()});
  ASSERT_TRUE(s2.ok()) << s2;
  EXPECT_EQ(CopyBack<uint64_t>(out->get(), 3), rows3);

  // 2M rows of 1024 (column sums).
  const uint64_t rows = kN / 1024;
  std::vector<uint64_t> colsum(1024, 0);
  for (uint64_t r = 0; r < rows; ++r) {
    const uint8_t* row = h.data() + r * 1024;
    for (uint64_t c = 0; c < 1024; ++c) colsum[c] += row[c];
  }
  PoisonDevice(out->get(), 1024 * sizeof(uint64_t));
  const absl::Status s3 = RunWith<RA, cuda::DeviceReduce>(RA{x, DType::kU8, rows, 1024, ReduceOp::kSum, Dim::kRows, out->get()});
  ASSERT_TRUE(s3.ok()) << s3;
  EXPECT_EQ(CopyBack<uint64_t>(out->get(), 1024), colsum);

  // Max over everything: 255 is present with overwhelming probability; check against host.
  uint8_t hmax = 0;
  for (uint64_t i = 0; i < kN; ++i) hmax = h[i] > hmax ? h[i] : hmax;
  const absl::Status s4 = RunWith<RA, cuda::DeviceReduce>(RA{x, DType::kU8, kN, 1, ReduceOp::kMax, Dim::kAll, out->get()});
  ASSERT_TRUE(s4.ok()) << s4;
  EXPECT_EQ(CopyBack<uint8_t>(out->get(), 1)[0], hmax);
}

TEST(CudaReduceScanBig, U8ScanBeyond2To31Elements) {
  HISTD_REQUIRE_GPU();
  if (!EnoughFreeMemory(kN * 9 + 4096)) GTEST_SKIP() << "needs ~21 GB of free device memory";
  const uint64_t seed = TestSeed() + 1;
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  absl::StatusOr<DeviceBuffer> buf = DeviceBuffer::Allocate(kN + 64);
  absl::StatusOr<DeviceBuffer> out = DeviceBuffer::Allocate(kN * sizeof(uint64_t) + 64);
  absl::StatusOr<DeviceBuffer> flags = DeviceBuffer::Allocate(2 * sizeof(unsigned long long));
  absl::StatusOr<DeviceBuffer> sum = DeviceBuffer::Allocate(sizeof(uint64_t));
  ASSERT_TRUE(buf.ok() && out.ok() && flags.ok() && sum.ok());
  uint8_t* x = buf->as<uint8_t>() + kOffset;
  uint64_t* y = out->as<uint64_t>() + 1;  // misaligned for 16-byte stores, on purpose
  FillKernel<<<4096, 256>>>(x, kN, seed);
  ASSERT_TRUE(Sync("fill").ok());
  using RA = cuda::ReduceArgs;
  ASSERT_TRUE((RunWith<RA, cuda::DeviceReduce>(RA{x, DType::kU8, 1, kN, ReduceOp::kSum, Dim::kAll, sum->get()}).ok()));
  const uint64_t total = CopyBack<uint64_t>(sum->get(), 1)[0];
  for (bool inclusive : {true, false}) {
    SCOPED_TRACE(inclusive ? "inclusive" : "exclusive");
    PoisonDevice(out->get(), kN * sizeof(uint64_t) + 64);
    using SA = cuda::ScanArgs;
    const absl::Status s = RunWith<SA, cuda::DeviceScan>(SA{x, DType::kU8, 1, kN, inclusive, Dim::kAll, y});
    ASSERT_TRUE(s.ok()) << s;
    const unsigned long long init[2] = {0, ~0ull};
    ASSERT_EQ(cudaMemcpy(flags->get(), init, sizeof init, cudaMemcpyHostToDevice), cudaSuccess);
    RecurrenceKernel<<<8192, 256>>>(x, y, kN, inclusive, flags->as<unsigned long long>(),
                                    flags->as<unsigned long long>() + 1);
    ASSERT_TRUE(Sync("recurrence").ok());
    const std::vector<unsigned long long> f = CopyBack<unsigned long long>(flags->get(), 2);
    EXPECT_EQ(f[0], 0u) << "first bad element " << f[1];
    const uint64_t last = CopyBack<uint64_t>(y + kN - 1, 1)[0];
    const uint8_t last_x = CopyBack<uint8_t>(x + kN - 1, 1)[0];
    EXPECT_EQ(inclusive ? last : last + last_x, total);
  }
}

}  // namespace
}  // namespace histd::testing::rs
