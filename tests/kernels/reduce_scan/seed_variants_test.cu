// The seed variants: seed 002's seven reduction steps (int32, wrapping sum) and seed 004's
// row-partition reduce and scan (float32), against host references.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "experiments/reduce_scan/row_partition.h"
#include "experiments/reduce_scan/seed_reduce.h"
#include "kernels/common/cuda_status.h"
#include "kernels/common/device_buffer.h"
#include "tests/kernels/gpu_test_util.h"
#include "tests/kernels/reduce_scan/reference.h"

namespace histd::testing::rs {
namespace {

using cuda::DeviceBuffer;

template <typename Op, typename Args>
absl::Status RunOp(const Args& a) {
  HISTD_RETURN_IF_ERROR(Op::can_implement(a));
  const size_t bytes = Op::get_workspace_size(a);
  absl::StatusOr<DeviceBuffer> ws = DeviceBuffer::Allocate(bytes);
  if (!ws.ok()) return ws.status();
  if (bytes > 0) PoisonDevice(ws->get(), bytes);
  if (absl::Status s = Op::run(a, ws->get(), nullptr); !s.ok()) return s;
  return cuda::ToStatus(cudaDeviceSynchronize(), "seed variant");
}

TEST(CudaSeedReduce, EveryStepEverySize) {
  HISTD_REQUIRE_GPU();
  std::mt19937_64 rng(TestSeed() + 23);
  const uint64_t sizes[] = {0, 1, 255, 256, 257, 511, 512, 513, 65535, 65537, (1u << 20) + 3,
                            (1u << 24) + 1, 3 * (1u << 22) + 7};
  for (uint64_t n : sizes) {
    if (LeanSkips(n)) continue;
    std::vector<int32_t> x = RandomValues<int32_t>(n, rng);
    uint32_t want = 0;  // the seed's int sum, wrapping
    for (int32_t v : x) want += static_cast<uint32_t>(v);
    Placed in = PlaceOnDevice(x.data(), n * sizeof(int32_t), 0);
    absl::StatusOr<DeviceBuffer> out = DeviceBuffer::Allocate(sizeof(int32_t));
    ASSERT_TRUE(out.ok());
    for (int s = 1; s <= cuda::kSeedReduceSteps; ++s) {
      const auto step = static_cast<cuda::SeedReduceStep>(s);
      SCOPED_TRACE(::testing::Message() << "seed " << TestSeed() << ", n=" << n << ", step "
                                        << cuda::SeedReduceStepName(step));
      PoisonDevice(out->get(), sizeof(int32_t));
      const cuda::SeedReduceArgs a{step, reinterpret_cast<const int32_t*>(in.at), n, out->as<int32_t>()};
      const absl::Status st = RunOp<cuda::SeedReduce>(a);
      ASSERT_TRUE(st.ok()) << st;
      EXPECT_EQ(static_cast<uint32_t>(CopyBack<int32_t>(out->get(), 1)[0]), want);
    }
  }
}

TEST(CudaSeedReduce, RejectsUnknownStep) {
  HISTD_REQUIRE_GPU();
  int32_t dummy = 0;
  const cuda::SeedReduceArgs a{static_cast<cuda::SeedReduceStep>(8), nullptr, 0, &dummy};
  EXPECT_EQ(cuda::SeedReduce::can_implement(a).code(), absl::StatusCode::kInvalidArgument);
}

TEST(CudaRowPartition, ReduceAndScanMatchTheReference) {
  HISTD_REQUIRE_GPU();
  std::mt19937_64 rng(TestSeed() + 29);
  const uint64_t sizes[] = {0, 1, 31, 3071, 3072, 3073, 100003, (1u << 20) + 1, (1u << 22) + 12345,
                            3000 * 3072 + 5};
  for (uint64_t n : sizes) {
    if (LeanSkips(n)) continue;
    const std::vector<float> x = RandomValues<float>(n, rng);
    for (uint64_t off : {uint64_t{0}, uint64_t{1 + rng() % 3}}) {
      SCOPED_TRACE(::testing::Message() << "seed " << TestSeed() << ", n=" << n << ", offset " << off);
      Placed in = PlaceOnDevice(x.data(), n * sizeof(float), off * sizeof(float));
      const float* src = reinterpret_cast<const float*>(in.at);
      // Reduce.
      absl::StatusOr<DeviceBuffer> one = DeviceBuffer::Allocate(sizeof(float));
      ASSERT_TRUE(one.ok());
      PoisonDevice(one->get(), sizeof(float));
      ASSERT_TRUE(RunOp<cuda::RowPartitionReduce>(cuda::RowPartitionArgs{src, n, one->as<float>(), true}).ok());
      const RefValue<float> ref = ReduceRef(x.data(), 0, 1, n);
      const float got = CopyBack<float>(one->get(), 1)[0];
      EXPECT_LE(std::fabs(static_cast<long double>(got) - ref.exact),
                FloatTolerance<float>(ref.exact, ref.magnitude, n))
          << "sum: got " << got << ", want " << static_cast<float>(ref.exact);
      // Scan, inclusive and exclusive, twice (bits must repeat).
      absl::StatusOr<DeviceBuffer> out = DeviceBuffer::Allocate((n + 1) * sizeof(float));
      ASSERT_TRUE(out.ok());
      for (bool inclusive : {true, false}) {
        std::vector<float> first;
        for (int run = 0; run < 2; ++run) {
          PoisonDevice(out->get(), (n + 1) * sizeof(float));
          ASSERT_TRUE(RunOp<cuda::RowPartitionScan>(cuda::RowPartitionArgs{src, n, out->as<float>(), inclusive}).ok());
          std::vector<float> got_all = CopyBack<float>(out->get(), n + 1);
          uint32_t tail;
          std::memcpy(&tail, &got_all[n], 4);
          EXPECT_EQ(tail, 0xA5A5A5A5u) << "wrote past the end";
          if (run == 1) {
            EXPECT_EQ(std::memcmp(first.data(), got_all.data(), n * sizeof(float)), 0) << "not deterministic";
            break;
          }
          long double acc = 0, mag = 0;
          int failures = 0;
          for (uint64_t i = 0; i < n && failures < 5; ++i) {
            if (inclusive) acc += x[i], mag += std::fabs(x[i]);
            if (std::fabs(static_cast<long double>(got_all[i]) - acc) > FloatTolerance<float>(acc, mag, n)) {
              ++failures;
              ADD_FAILURE() << (inclusive ? "inclusive" : "exclusive") << " element " << i << ": got "
                            << got_all[i] << ", want " << static_cast<float>(acc);
            }
            if (!inclusive) acc += x[i], mag += std::fabs(x[i]);
          }
          first = std::move(got_all);
        }
      }
    }
  }
}

}  // namespace
}  // namespace histd::testing::rs
