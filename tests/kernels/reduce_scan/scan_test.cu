// DeviceScan against the host reference: every dtype, inclusive and exclusive, flattened /
// along rows / down columns, sizes around the tile and the look-back's 32- and 1024-tile
// group boundaries, misaligned inputs and outputs, int32 into int64 past 32 bits,
// determinism of float scans, and argument checks.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "kernels/common/cuda_status.h"
#include "kernels/common/device_buffer.h"
#include "kernels/reduce_scan/scan.h"
#include "kernels/reduce_scan/tuning.h"
#include "tests/kernels/gpu_test_util.h"
#include "tests/kernels/reduce_scan/reference.h"
#include "tests/kernels/reduce_scan/scan_check.h"

namespace histd::testing::rs {
namespace {

using cuda::DeviceBuffer;
using cuda::DeviceScan;
using cuda::ScanArgs;

absl::Status RunScan(const ScanArgs& a) {
  HISTD_RETURN_IF_ERROR(DeviceScan::can_implement(a));
  const size_t bytes = DeviceScan::get_workspace_size(a);
  absl::StatusOr<DeviceBuffer> ws = DeviceBuffer::Allocate(bytes);
  if (!ws.ok()) return ws.status();
  if (bytes > 0) PoisonDevice(ws->get(), bytes);  // run() must clear what it needs
  if (absl::Status s = DeviceScan::run(a, ws->get(), nullptr); !s.ok()) return s;
  return cuda::ToStatus(cudaDeviceSynchronize(), "scan");
}

template <typename T>
constexpr uint64_t TileOf() {
  using Tu = typename cuda::reduce_scan::ScanTuningFor<T>::type;
  return uint64_t(Tu::kThreads) * Tu::kItems;
}

template <typename T>
class CudaScanTyped : public ::testing::Test {};
using AllTypes = ::testing::Types<uint8_t, int32_t, int64_t, uint32_t, uint64_t, float, double>;
TYPED_TEST_SUITE(CudaScanTyped, AllTypes);

// Flattened scans of sizes around the tile and the look-back's group boundaries.
TYPED_TEST(CudaScanTyped, FlatSizesAndAlignments) {
  HISTD_REQUIRE_GPU();
  using T = TypeParam;
  constexpr uint64_t kTile = TileOf<T>(), kVec = 16 / sizeof(T);
  std::mt19937_64 rng(TestSeed() ^ (sizeof(T) * 31) ^ (std::is_floating_point_v<T> ? 0x200 : 0));
  const uint64_t sizes[] = {0, 1, 31, 32, 33, 255, 257, 1023, 1025, kTile - 1, kTile, kTile + 1,
                            2 * kTile + 3, 31 * kTile, 32 * kTile - 1, 32 * kTile + 1, 33 * kTile + 7,
                            (1u << 20) + 1, 1024 * kTile + 17, 3 * 1024 * kTile + 5 * kTile + 5};
  for (uint64_t n : sizes) {
    if (LeanSkips(n)) continue;
    const std::vector<T> x = RandomValues<T>(n, rng);
    const uint64_t in_off = rng() % kVec, out_off = rng() % 3;
    for (uint64_t off : {uint64_t{0}, in_off}) {
      SCOPED_TRACE(::testing::Message() << "seed " << TestSeed() << ", " << DTypeName(DTypeOf<T>())
                                        << " n=" << n << ", input offset " << off);
      Placed in = PlaceOnDevice(x.data(), n * sizeof(T), off * sizeof(T));
      for (bool inclusive : {true, false}) {
        CheckScan(x, in.at, 1, n, inclusive, Dim::kAll, off == 0 ? 0 : out_off, RunScan);
      }
    }
  }
}

// 2D shapes along every dimension: per-row look-back, warp per row, column scans in one
// and three passes.
TYPED_TEST(CudaScanTyped, ShapesAlongEveryDim) {
  HISTD_REQUIRE_GPU();
  using T = TypeParam;
  constexpr uint64_t kVec = 16 / sizeof(T);
  std::mt19937_64 rng(TestSeed() ^ (sizeof(T) * 77) ^ (std::is_floating_point_v<T> ? 0x300 : 0));
  struct Shape { uint64_t rows, cols; };
  for (const Shape& s : {Shape{0, 7}, Shape{7, 0}, Shape{1, 33}, Shape{33, 1}, Shape{2, 5}, Shape{7, 3},
                         Shape{64, 64}, Shape{65, 1023}, Shape{256, 8192}, Shape{3, 100003},
                         Shape{100003, 3}, Shape{1000, 4097}, Shape{5000, 17}, Shape{17, 5000},
                         Shape{300, 301}, Shape{9, 70001}, Shape{4097, 64}, Shape{2, 6145}}) {
    if (LeanSkips(s.rows * s.cols)) continue;
    const std::vector<T> x = RandomValues<T>(s.rows * s.cols, rng);
    const uint64_t in_off = rng() % kVec, out_off = rng() % 3;
    for (uint64_t off : {uint64_t{0}, in_off}) {
      SCOPED_TRACE(::testing::Message() << "seed " << TestSeed() << ", " << DTypeName(DTypeOf<T>())
                                        << " " << ShapeName(s.rows, s.cols) << ", input offset " << off);
      Placed in = PlaceOnDevice(x.data(), x.size() * sizeof(T), off * sizeof(T));
      for (Dim dim : {Dim::kAll, Dim::kRows, Dim::kCols}) {
        for (bool inclusive : {true, false}) {
          CheckScan(x, in.at, s.rows, s.cols, inclusive, dim, off == 0 ? 0 : out_off, RunScan);
        }
      }
    }
  }
}

// Same input, same device: the same bits, run after run.
TYPED_TEST(CudaScanTyped, DeterministicBits) {
  HISTD_REQUIRE_GPU();
  using T = TypeParam;
  using R = SumOf<T>;
  std::mt19937_64 rng(TestSeed() + 17);
  struct Case { uint64_t rows, cols; Dim dim; };
  const uint64_t flat = Scaled((1u << 22) + 12345, 65537), odd = Scaled(113359, 1771);
  for (const Case& c : {Case{1, flat, Dim::kAll}, Case{37, odd, Dim::kCols}, Case{odd, 37, Dim::kRows}}) {
    SCOPED_TRACE(::testing::Message() << "seed " << TestSeed() << ", " << ShapeName(c.rows, c.cols)
                                      << " along " << DimName(c.dim));
    const uint64_t n = c.rows * c.cols;
    const std::vector<T> x = RandomValues<T>(n, rng);
    Placed in = PlaceOnDevice(x.data(), n * sizeof(T), sizeof(T));
    absl::StatusOr<DeviceBuffer> out = DeviceBuffer::Allocate(n * sizeof(R));
    ASSERT_TRUE(out.ok());
    std::vector<R> first;
    for (int run = 0; run < 3; ++run) {
      PoisonDevice(out->get(), n * sizeof(R));
      ASSERT_TRUE(RunScan(ScanArgs{in.at, DTypeOf<T>(), c.rows, c.cols, true, c.dim, out->get()}).ok());
      std::vector<R> got = CopyBack<R>(out->get(), n);
      if (run == 0) {
        first = std::move(got);
      } else {
        ASSERT_EQ(std::memcmp(first.data(), got.data(), n * sizeof(R)), 0) << "run " << run;
      }
    }
  }
}

// int32 scans into int64: prefixes far beyond the int32 range are exact (never wrap).
TEST(CudaScan, Int32IntoInt64PastThe32BitRange) {
  HISTD_REQUIRE_GPU();
  std::mt19937_64 rng(TestSeed() + 19);
  constexpr uint64_t kTile = TileOf<int32_t>();
  for (int32_t extreme : {std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min()}) {
    const uint64_t n = 1100 * kTile + 3;
    std::vector<int32_t> x(n, extreme);
    for (int k = 0; k < 1000; ++k) x[rng() % n] = static_cast<int32_t>(rng());
    SCOPED_TRACE(::testing::Message() << "seed " << TestSeed() << ", extreme " << extreme);
    Placed in = PlaceOnDevice(x.data(), n * sizeof(int32_t), 4);
    for (bool inclusive : {true, false}) CheckScan(x, in.at, 1, n, inclusive, Dim::kAll, 1, RunScan);
    CheckScan(x, in.at, 11, n / 11, true, Dim::kCols, 0, RunScan);
    CheckScan(x, in.at, n / 11, 11, true, Dim::kRows, 0, RunScan);
  }
}

TEST(CudaScan, RejectsBadArguments) {
  HISTD_REQUIRE_GPU();
  absl::StatusOr<DeviceBuffer> buf = DeviceBuffer::Allocate(1 << 20);
  ASSERT_TRUE(buf.ok());
  uint8_t* p = buf->as<uint8_t>();
  const ScanArgs good{p, DType::kF32, 10, 100, true, Dim::kAll, p + 4096};
  EXPECT_TRUE(DeviceScan::can_implement(good).ok());
  ScanArgs a = good;
  a.output = p + 2000;  // overlaps the input
  EXPECT_EQ(DeviceScan::can_implement(a).code(), absl::StatusCode::kInvalidArgument);
  a = good;
  a.input = p + 1;
  EXPECT_EQ(DeviceScan::can_implement(a).code(), absl::StatusCode::kInvalidArgument);
  a = good;
  a.dtype = DType::kU8;
  a.output = p + 4097;  // u64 result not 8-byte aligned
  EXPECT_EQ(DeviceScan::can_implement(a).code(), absl::StatusCode::kInvalidArgument);
  a = good;
  a.along = static_cast<Dim>(7);
  EXPECT_EQ(DeviceScan::can_implement(a).code(), absl::StatusCode::kInvalidArgument);
  // The single-pass scan needs a workspace: a missing or misaligned one is refused.
  ASSERT_GT(DeviceScan::get_workspace_size(good), 0u);
  EXPECT_EQ(DeviceScan::run(good, nullptr, nullptr).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(DeviceScan::run(good, p + 8192 + 4, nullptr).code(), absl::StatusCode::kInvalidArgument);
  // Empty: nothing to do, nothing written.
  a = good;
  a.rows = 0;
  EXPECT_TRUE(RunScan(a).ok());
}

}  // namespace
}  // namespace histd::testing::rs
