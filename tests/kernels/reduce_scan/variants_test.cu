// Measured variants against the host reference (reference.h), outputs and workspaces
// poisoned first:
//   - the chained (CUB-style, deterministic) look-back scan for every dtype, inclusive and
//     exclusive, flat / along rows / down columns, at the production tile shapes and at tiny
//     tiles that force deep, multi-window look-backs; its run-to-run bit identity;
//   - block-per-row scans along rows (u8 -> u64 histogram CDFs, warp-per-row path off);
//   - DeviceProjection (single-launch u8 row and column sums) and every experiment shape
//     (ProjectionWithVariant), with and without programmatic dependent launch, and the
//     argument checks.
// The tunings and shapes are experiments (experiments/reduce_scan/); production's run the
// production kernels.
#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "experiments/reduce_scan/projection_variants.h"
#include "experiments/reduce_scan/reduce_scan_tunings.cuh"
#include "kernels/common/cuda_status.h"
#include "kernels/common/device_buffer.h"
#include "kernels/reduce_scan/projection.h"
#include "kernels/reduce_scan/scan.h"
#include "kernels/reduce_scan/tuning.h"
#include "tests/kernels/gpu_test_util.h"
#include "tests/kernels/reduce_scan/reference.h"
#include "tests/kernels/reduce_scan/scan_check.h"

namespace histd::testing::rs {
namespace {

namespace rsk = cuda::reduce_scan;
using cuda::DeviceBuffer;
using cuda::ScanArgs;

// Runs the scan of `a` with an explicit tuning (ScanWithTuning), on a poisoned workspace
// (the plan must clear what it needs).
template <typename T, typename Tuning, bool kAllowWarpRows = true>
absl::Status RunTuned(const ScanArgs& a) {
  using Op = cuda::ScanWithTuning<T, Tuning, kAllowWarpRows>;
  HISTD_RETURN_IF_ERROR(Op::can_implement(a));
  const size_t bytes = Op::get_workspace_size(a);
  absl::StatusOr<DeviceBuffer> ws = DeviceBuffer::Allocate(bytes);
  if (!ws.ok()) return ws.status();
  if (bytes > 0) PoisonDevice(ws->get(), bytes);
  HISTD_RETURN_IF_ERROR(Op::run(a, ws->get(), nullptr));
  return cuda::ToStatus(cudaDeviceSynchronize(), "tuned scan");
}

// Production-shaped chained tunings (f32: reduce first, as its default) and tiny tiles.
template <typename T>
using ChainedTuning = std::conditional_t<std::is_same_v<T, float>, rsk::ScanTuningT<128, 24, 8, true, true>,
                                         rsk::ScanTuningT<128, 16, 1, false, true>>;
template <typename T>
using TinyChainedTuning = rsk::ScanTuningT<32, 16 / sizeof(T), 1, true, true>;
// The blockIdx-ordered (no ticket) variant measured by the benchmark.
template <typename T>
using BlockOrderChainedTuning = rsk::ScanTuningT<128, std::is_same_v<T, float> ? 24 : 16, 1, true, true, false>;

template <typename T>
class CudaChainedScan : public ::testing::Test {};
using AllTypes = ::testing::Types<uint8_t, int32_t, int64_t, uint32_t, uint64_t, float, double>;
TYPED_TEST_SUITE(CudaChainedScan, AllTypes);

TYPED_TEST(CudaChainedScan, FlatSizesAndAlignments) {
  HISTD_REQUIRE_GPU();
  using T = TypeParam;
  using Tu = ChainedTuning<T>;
  constexpr uint64_t kTile = uint64_t(Tu::kThreads) * Tu::kItems, kVec = 16 / sizeof(T);
  std::mt19937_64 rng(TestSeed() ^ (sizeof(T) * 131) ^ (std::is_floating_point_v<T> ? 0x500 : 0));
  const uint64_t sizes[] = {0, 1, 31, 32, 33, 255, 257, 1023, 1025, kTile - 1, kTile, kTile + 1,
                            2 * kTile + 3, 32 * kTile - 1, 32 * kTile + 1, 33 * kTile + 7,
                            (1u << 20) - 1, (1u << 20) + 1, 130 * kTile + 17};
  for (uint64_t n : sizes) {
    if (LeanSkips(n)) continue;
    const std::vector<T> x = RandomValues<T>(n, rng);
    const uint64_t in_off = rng() % kVec, out_off = 1 + rng() % 2;
    for (uint64_t off : {uint64_t{0}, in_off}) {
      SCOPED_TRACE(::testing::Message() << "seed " << TestSeed() << ", " << DTypeName(DTypeOf<T>())
                                        << " n=" << n << ", input offset " << off);
      Placed in = PlaceOnDevice(x.data(), n * sizeof(T), off * sizeof(T));
      for (bool inclusive : {true, false}) {
        CheckScan(x, in.at, 1, n, inclusive, Dim::kAll, off == 0 ? 0 : out_off, RunTuned<T, Tu>);
      }
    }
  }
}

// Tiny tiles: thousands of tiles, look-backs over several windows and waits at the deepest.
TYPED_TEST(CudaChainedScan, TinyTilesDeepLookback) {
  HISTD_REQUIRE_GPU();
  using T = TypeParam;
  using Tu = TinyChainedTuning<T>;
  std::mt19937_64 rng(TestSeed() ^ (sizeof(T) * 137) ^ (std::is_floating_point_v<T> ? 0x600 : 0));
  for (uint64_t n : {uint64_t{(1u << 21) + 3}, uint64_t{70001}}) {
    if (LeanSkips(n)) continue;
    const std::vector<T> x = RandomValues<T>(n, rng);
    SCOPED_TRACE(::testing::Message() << "seed " << TestSeed() << ", " << DTypeName(DTypeOf<T>()) << " n=" << n);
    Placed in = PlaceOnDevice(x.data(), n * sizeof(T), sizeof(T));
    for (bool inclusive : {true, false}) CheckScan(x, in.at, 1, n, inclusive, Dim::kAll, 1, RunTuned<T, Tu>);
    CheckScan(x, in.at, 7, n / 7, true, Dim::kCols, 0, RunTuned<T, Tu>);
    CheckScan(x, in.at, 1, n, true, Dim::kAll, 0, RunTuned<T, BlockOrderChainedTuning<T>>);
    CheckScan(x, in.at, 1, n, false, Dim::kAll, 0, RunTuned<T, rsk::ScanTuningT<32, 16 / sizeof(T), 1, true, false, false>>);
  }
}

TYPED_TEST(CudaChainedScan, ShapesAlongEveryDim) {
  HISTD_REQUIRE_GPU();
  using T = TypeParam;
  constexpr uint64_t kVec = 16 / sizeof(T);
  std::mt19937_64 rng(TestSeed() ^ (sizeof(T) * 139) ^ (std::is_floating_point_v<T> ? 0x700 : 0));
  struct Shape { uint64_t rows, cols; };
  for (const Shape& s : {Shape{0, 7}, Shape{7, 0}, Shape{1, 33}, Shape{33, 1}, Shape{256, 8192},
                         Shape{3, 100003}, Shape{17, 5000}, Shape{9, 70001}}) {
    if (LeanSkips(s.rows * s.cols)) continue;
    const std::vector<T> x = RandomValues<T>(s.rows * s.cols, rng);
    const uint64_t in_off = rng() % kVec;
    for (uint64_t off : {uint64_t{0}, in_off}) {
      SCOPED_TRACE(::testing::Message() << "seed " << TestSeed() << ", " << DTypeName(DTypeOf<T>())
                                        << " " << ShapeName(s.rows, s.cols) << ", input offset " << off);
      Placed in = PlaceOnDevice(x.data(), x.size() * sizeof(T), off * sizeof(T));
      for (Dim dim : {Dim::kAll, Dim::kRows, Dim::kCols}) {
        for (bool inclusive : {true, false}) {
          CheckScan(x, in.at, s.rows, s.cols, inclusive, dim, off == 0 ? 0 : 1, RunTuned<T, ChainedTuning<T>>);
        }
      }
    }
  }
}

// Same input, same device: the same bits, run after run (the left-fold definition).
TYPED_TEST(CudaChainedScan, DeterministicBits) {
  HISTD_REQUIRE_GPU();
  using T = TypeParam;
  using R = SumOf<T>;
  std::mt19937_64 rng(TestSeed() + 23);
  const uint64_t n = Scaled((1u << 22) + 12345, 65537);
  const std::vector<T> x = RandomValues<T>(n, rng);
  Placed in = PlaceOnDevice(x.data(), n * sizeof(T), sizeof(T));
  absl::StatusOr<DeviceBuffer> out = DeviceBuffer::Allocate(n * sizeof(R));
  ASSERT_TRUE(out.ok());
  for (int tuning = 0; tuning < 2; ++tuning) {
    SCOPED_TRACE(::testing::Message() << "seed " << TestSeed() << (tuning == 0 ? ", production tile" : ", tiny tile"));
    std::vector<R> first;
    for (int run = 0; run < 3; ++run) {
      PoisonDevice(out->get(), n * sizeof(R));
      const ScanArgs a{in.at, DTypeOf<T>(), 1, n, true, Dim::kAll, out->get()};
      const absl::Status s = tuning == 0 ? RunTuned<T, ChainedTuning<T>>(a) : RunTuned<T, TinyChainedTuning<T>>(a);
      ASSERT_TRUE(s.ok()) << s;
      std::vector<R> got = CopyBack<R>(out->get(), n);
      if (run == 0) {
        first = std::move(got);
      } else {
        ASSERT_EQ(std::memcmp(first.data(), got.data(), n * sizeof(R)), 0) << "run " << run;
      }
    }
  }
}

// Histogram CDFs along rows with a block per row (the warp-per-row path off), both protocols.
TEST(CudaScanVariants, U8BlockPerRowCdf) {
  HISTD_REQUIRE_GPU();
  std::mt19937_64 rng(TestSeed() + 29);
  struct Shape { uint64_t rows, cols; };
  for (const Shape& s : {Shape{256, 8192}, Shape{31, 8192}, Shape{5, 8191}, Shape{3, 100003},
                         Shape{40, 33}, Shape{1, 1}, Shape{2, 16385}}) {
    if (LeanSkips(s.rows * s.cols)) continue;
    const std::vector<uint8_t> x = RandomValues<uint8_t>(s.rows * s.cols, rng);
    for (uint64_t off : {uint64_t{0}, uint64_t{1 + rng() % 15}}) {
      SCOPED_TRACE(::testing::Message() << "seed " << TestSeed() << ", " << ShapeName(s.rows, s.cols)
                                        << ", input offset " << off);
      Placed in = PlaceOnDevice(x.data(), x.size(), off);
      for (bool inclusive : {true, false}) {
        CheckScan(x, in.at, s.rows, s.cols, inclusive, Dim::kCols, off == 0 ? 0 : 1,
                  RunTuned<uint8_t, rsk::ScanTuningT<128, 64, 1, true, true>, false>);
        CheckScan(x, in.at, s.rows, s.cols, inclusive, Dim::kCols, 0,
                  RunTuned<uint8_t, rsk::ScanTuningT<256, 32, 1, true, false>, false>);
      }
    }
  }
}

// ---- DeviceProjection and its experiment shapes ----

// DeviceProjection when `variant` is empty, else ProjectionWithVariant.
absl::Status RunProjection(const cuda::ProjectionArgs& a, std::optional<cuda::ProjectionVariant> variant) {
  if (variant) {
    HISTD_RETURN_IF_ERROR(cuda::ProjectionWithVariant::run(a, *variant, nullptr, nullptr));
  } else {
    HISTD_RETURN_IF_ERROR(cuda::DeviceProjection::run(a, nullptr, nullptr));
  }
  return cuda::ToStatus(cudaDeviceSynchronize(), "projection");
}

void CheckProjection(const std::vector<uint8_t>& x, const uint8_t* in, uint64_t rows, uint64_t cols,
                     Dim collapse, std::optional<cuda::ProjectionVariant> variant, bool pdl) {
  SCOPED_TRACE(::testing::Message() << (collapse == Dim::kRows ? "column sums" : "row sums") << ", "
                                    << (variant ? "variant " + std::to_string(int(*variant)) : std::string("production"))
                                    << (pdl ? ", PDL" : ""));
  const uint64_t outs = collapse == Dim::kRows ? cols : rows;
  const uint64_t slots = outs + 2;
  absl::StatusOr<DeviceBuffer> out = DeviceBuffer::Allocate(slots * sizeof(uint64_t));
  ASSERT_TRUE(out.ok());
  PoisonDevice(out->get(), slots * sizeof(uint64_t));
  uint64_t* at = out->as<uint64_t>() + 1;
  const absl::Status s = RunProjection(cuda::ProjectionArgs{in, rows, cols, collapse, at, pdl}, variant);
  ASSERT_TRUE(s.ok()) << s;
  const std::vector<uint64_t> all = CopyBack<uint64_t>(out->get(), slots);
  uint64_t poison;
  std::memset(&poison, 0xA5, sizeof poison);
  EXPECT_EQ(all[0], poison) << "wrote before the start";
  EXPECT_EQ(all[outs + 1], poison) << "wrote past the end";
  int failures = 0;
  for (uint64_t o = 0; o < outs && failures < 5; ++o) {
    const RefValue<uint8_t> ref = collapse == Dim::kRows ? ReduceRef(x.data(), o, cols, rows)
                                                         : ReduceRef(x.data(), o * cols, 1, cols);
    if (all[o + 1] != ref.sum) {
      ++failures;
      ADD_FAILURE() << "output " << o << ": got " << all[o + 1] << ", want " << ref.sum;
    }
  }
}

TEST(CudaProjection, EveryVariantAndShape) {
  HISTD_REQUIRE_GPU();
  using V = cuda::ProjectionVariant;
  std::mt19937_64 rng(TestSeed() + 31);
  struct Shape { uint64_t rows, cols; };
  for (const Shape& s : {Shape{256, 8192}, Shape{1, 16}, Shape{1, 8192}, Shape{31, 32}, Shape{33, 48},
                         Shape{257, 4112}, Shape{1000, 160}, Shape{5, 16400}, Shape{4097, 16},
                         Shape{0, 64}, Shape{3, 0}, Shape{17, 33024}}) {
    if (LeanSkips(s.rows * s.cols)) continue;
    const std::vector<uint8_t> x = RandomValues<uint8_t>(s.rows * s.cols, rng);
    SCOPED_TRACE(::testing::Message() << "seed " << TestSeed() << ", " << ShapeName(s.rows, s.cols));
    Placed in = PlaceOnDevice(x.data(), x.size(), 0);
    for (V v : {V::kDefault, V::kRows256x2, V::kRows64x8, V::kCols64x16, V::kCols128x8, V::kCols32x8,
                V::kCols64x8, V::kColsStrip4x64, V::kColsStrip2x128, V::kColsStrip4x32, V::kColsStrip8x32,
                V::kColsStrip2x256, V::kColsStrip1x256, V::kColsStrip8x128, V::kColsStrip8x64,
                V::kColsPacked2x128, V::kColsPacked4x64, V::kColsPacked4x64U4, V::kColsPacked8x32U8,
                V::kColsPacked2x128U1}) {
      for (bool pdl : {false, true}) {
        CheckProjection(x, in.at, s.rows, s.cols, Dim::kRows, v, pdl);
        CheckProjection(x, in.at, s.rows, s.cols, Dim::kCols, v, pdl);
      }
    }
    for (bool pdl : {false, true}) {
      CheckProjection(x, in.at, s.rows, s.cols, Dim::kRows, std::nullopt, pdl);
      CheckProjection(x, in.at, s.rows, s.cols, Dim::kCols, std::nullopt, pdl);
    }
  }
}

// Saturated bins: every byte 255 (the per-thread u32 partials at their largest).
TEST(CudaProjection, SaturatedBins) {
  HISTD_REQUIRE_GPU();
  const uint64_t rows = 70001, cols = 32;
  const std::vector<uint8_t> x(rows * cols, 255);
  Placed in = PlaceOnDevice(x.data(), x.size(), 0);
  for (std::optional<cuda::ProjectionVariant> v :
       {std::optional<cuda::ProjectionVariant>(), std::optional(cuda::ProjectionVariant::kDefault),
        std::optional(cuda::ProjectionVariant::kCols64x16), std::optional(cuda::ProjectionVariant::kColsStrip8x32),
        std::optional(cuda::ProjectionVariant::kColsPacked2x128)}) {
    CheckProjection(x, in.at, rows, cols, Dim::kRows, v, false);
    CheckProjection(x, in.at, rows, cols, Dim::kCols, v, false);
  }
}

TEST(CudaProjection, RejectsBadArguments) {
  HISTD_REQUIRE_GPU();
  absl::StatusOr<DeviceBuffer> buf = DeviceBuffer::Allocate(1 << 20);
  ASSERT_TRUE(buf.ok());
  uint8_t* p = buf->as<uint8_t>();
  uint64_t* o = reinterpret_cast<uint64_t*>(p + (1 << 19));
  const cuda::ProjectionArgs good{p, 16, 64, Dim::kRows, o};
  EXPECT_TRUE(cuda::DeviceProjection::can_implement(good).ok());
  cuda::ProjectionArgs a = good;
  a.input = p + 1;  // not 16-byte aligned
  EXPECT_EQ(cuda::DeviceProjection::can_implement(a).code(), absl::StatusCode::kInvalidArgument);
  a = good;
  a.cols = 63;  // rows not 16-byte aligned
  EXPECT_EQ(cuda::DeviceProjection::can_implement(a).code(), absl::StatusCode::kInvalidArgument);
  a = good;
  a.collapse = Dim::kAll;
  EXPECT_EQ(cuda::DeviceProjection::can_implement(a).code(), absl::StatusCode::kInvalidArgument);
  a = good;
  a.output = reinterpret_cast<uint64_t*>(p + (1 << 19) + 4);
  EXPECT_EQ(cuda::DeviceProjection::can_implement(a).code(), absl::StatusCode::kInvalidArgument);
  a = good;
  a.rows = uint64_t{1} << 24;
  EXPECT_EQ(cuda::DeviceProjection::can_implement(a).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(cuda::DeviceProjection::get_workspace_size(good), 0u);
  EXPECT_EQ(cuda::ProjectionWithVariant::can_implement(good, static_cast<cuda::ProjectionVariant>(20)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(cuda::ProjectionWithVariant::run(good, static_cast<cuda::ProjectionVariant>(20), nullptr, nullptr).code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace histd::testing::rs
