// DeviceReduce against the host reference: every dtype, op and dimension, awkward shapes
// (0, 1, 31/32/33, 2^k +- 1, multiples of nothing, 1xN, Nx1, the 256x8192 histogram),
// misaligned inputs, signed zeros and NaN, empty extents, wrapping integer sums,
// determinism of float sums, and argument checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/common/cuda_status.h"
#include "kernels/common/device_buffer.h"
#include "kernels/reduce_scan/reduce.h"
#include "tests/kernels/gpu_test_util.h"
#include "tests/kernels/reduce_scan/reference.h"

namespace histd::testing::rs {
namespace {

using cuda::DeviceBuffer;
using cuda::DeviceReduce;
using cuda::ReduceArgs;
using Op = ReduceOp;

constexpr Op kOps[] = {Op::kSum, Op::kMin, Op::kMax};
constexpr Dim kDims[] = {Dim::kAll, Dim::kRows, Dim::kCols};
const char* OpName(Op op) { return op == Op::kSum ? "sum" : op == Op::kMin ? "min" : "max"; }

// Runs one reduce with a freshly allocated workspace (poisoned) and waits for it.
absl::Status RunReduce(const ReduceArgs& a) {
  HISTD_RETURN_IF_ERROR(DeviceReduce::can_implement(a));
  const size_t bytes = DeviceReduce::get_workspace_size(a);
  absl::StatusOr<DeviceBuffer> ws = DeviceBuffer::Allocate(bytes);
  if (!ws.ok()) return ws.status();
  if (bytes > 0) PoisonDevice(ws->get(), bytes);
  if (absl::Status s = DeviceReduce::run(a, ws->get(), nullptr); !s.ok()) return s;
  return cuda::ToStatus(cudaDeviceSynchronize(), "reduce");
}

uint64_t OutputCount(uint64_t rows, uint64_t cols, Dim dim) {
  return dim == Dim::kAll ? 1 : dim == Dim::kRows ? cols : rows;
}

// Reduces x (rows x cols, at device address `in`) and checks every output element.
template <typename T, typename R>
void CheckOne(const std::vector<T>& x, const void* in, uint64_t rows, uint64_t cols, Op op, Dim dim) {
  SCOPED_TRACE(::testing::Message() << OpName(op) << " over " << DimName(dim));
  const uint64_t outs = OutputCount(rows, cols, dim);
  absl::StatusOr<DeviceBuffer> out = DeviceBuffer::Allocate(std::max<uint64_t>(outs, 1) * sizeof(R));
  ASSERT_TRUE(out.ok()) << out.status();
  PoisonDevice(out->get(), std::max<uint64_t>(outs, 1) * sizeof(R));
  ReduceArgs a{in, DTypeOf<T>(), rows, cols, op, dim, out->get()};
  const uint64_t extent = dim == Dim::kAll ? rows * cols : dim == Dim::kRows ? rows : cols;
  if (op != Op::kSum && extent == 0 && outs > 0) {
    EXPECT_EQ(DeviceReduce::can_implement(a).code(), absl::StatusCode::kInvalidArgument);
    return;
  }
  ASSERT_TRUE(RunReduce(a).ok()) << RunReduce(a);
  const std::vector<R> got = CopyBack<R>(out->get(), outs);
  int failures = 0;
  for (uint64_t o = 0; o < outs && failures < 5; ++o) {
    const uint64_t first = dim == Dim::kAll ? 0 : dim == Dim::kRows ? o : o * cols;
    const uint64_t stride = dim == Dim::kRows ? cols : 1;
    const RefValue<T> ref = ReduceRef(x.data(), first, stride, extent);
    bool ok;
    R want;
    if (op == Op::kSum) {
      want = static_cast<R>(ref.sum);
      if constexpr (std::is_floating_point_v<R>) {
        if (!std::isfinite(ref.exact)) {  // inf - inf -> NaN; +-inf stays
          ok = std::isnan(ref.exact) ? std::isnan(got[o]) : static_cast<long double>(got[o]) == ref.exact;
        } else {
          ok = std::fabs(static_cast<long double>(got[o]) - ref.exact) <=
               FloatTolerance<R>(ref.exact, ref.magnitude, extent);
        }
      } else {
        ok = got[o] == want;
      }
    } else {
      want = static_cast<R>(op == Op::kMin ? ref.min : ref.max);
      ok = SameValue(got[o], want);
    }
    if (!ok) {
      ++failures;
      ADD_FAILURE() << "output " << o << ": got " << +got[o] << ", want " << +want;
    }
  }
}

template <typename T>
void CheckAllOpsDims(const std::vector<T>& x, const void* in, uint64_t rows, uint64_t cols) {
  for (Dim dim : kDims) {
    for (Op op : kOps) {
      if (op == Op::kSum) {
        CheckOne<T, SumOf<T>>(x, in, rows, cols, op, dim);
      } else {
        CheckOne<T, T>(x, in, rows, cols, op, dim);
      }
    }
  }
}

struct Shape {
  uint64_t rows, cols;
};
const Shape kShapes[] = {
    {0, 0}, {0, 5}, {5, 0}, {1, 1}, {1, 31}, {1, 32}, {1, 33}, {31, 1}, {33, 1},
    {1, 255}, {1, 257}, {1, 1023}, {1, 1025}, {1, 4095}, {1, 4097}, {1, 65535}, {1, 65537},
    {1, (1u << 20) - 1}, {1, (1u << 20) + 1}, {1, (1u << 22) + 5}, {2, 5}, {7, 3}, {3, 7},
    {64, 64}, {65, 1023}, {256, 8192}, {3, 100003}, {100003, 3}, {1000, 4097}, {5000, 17},
    {17, 5000}, {4097, 64}, {300, 301}, {(1u << 20) + 1, 1}, {9, 1u << 20}, {70, 9}, {2, 70001},
};

template <typename T>
class CudaReduceTyped : public ::testing::Test {};
using AllTypes = ::testing::Types<uint8_t, int32_t, int64_t, uint32_t, uint64_t, float, double>;
TYPED_TEST_SUITE(CudaReduceTyped, AllTypes);

TYPED_TEST(CudaReduceTyped, EveryOpDimShapeAndAlignment) {
  HISTD_REQUIRE_GPU();
  using T = TypeParam;
  constexpr uint64_t kVec = 16 / sizeof(T);
  std::mt19937_64 rng(TestSeed() ^ sizeof(T) ^ (std::is_floating_point_v<T> ? 0x100 : 0));
  for (const Shape& s : kShapes) {
    if (LeanSkips(s.rows * s.cols)) continue;
    const std::vector<T> x = RandomValues<T>(s.rows * s.cols, rng);
    const uint64_t misaligned = kVec > 1 ? 1 + rng() % (kVec - 1) : 0;
    for (uint64_t offset : {uint64_t{0}, misaligned}) {
      SCOPED_TRACE(::testing::Message() << "seed " << TestSeed() << ", " << DTypeName(DTypeOf<T>())
                                        << " " << ShapeName(s.rows, s.cols) << ", input offset "
                                        << offset << " elements");
      Placed in = PlaceOnDevice(x.data(), x.size() * sizeof(T), offset * sizeof(T));
      CheckAllOpsDims(x, in.at, s.rows, s.cols);
    }
  }
}

// Integer sums past 32 bits (i32 -> i64, u32 -> u64) and wrapping 64-bit sums.
TYPED_TEST(CudaReduceTyped, ExtremeIntegers) {
  HISTD_REQUIRE_GPU();
  using T = TypeParam;
  if constexpr (std::is_integral_v<T>) {
    std::mt19937_64 rng(TestSeed() + 7);
    for (T extreme : {std::numeric_limits<T>::max(), std::numeric_limits<T>::lowest()}) {
      const uint64_t rows = Scaled(777, 77), cols = 1031;  // 77 rows still sum past 2^32
      std::vector<T> x(rows * cols, extreme);
      for (int k = 0; k < 100; ++k) x[rng() % x.size()] = static_cast<T>(extreme ^ T(rng() & 7));
      SCOPED_TRACE(::testing::Message() << "seed " << TestSeed() << ", extreme " << +extreme);
      Placed in = PlaceOnDevice(x.data(), x.size() * sizeof(T), 0);
      CheckAllOpsDims(x, in.at, rows, cols);
    }
  }
}

// Signed zeros: min(+0, -0) = -0, max = +0 in any order; NaN anywhere gives NaN; infinities.
TYPED_TEST(CudaReduceTyped, SignedZerosNaNAndInfinities) {
  HISTD_REQUIRE_GPU();
  using T = TypeParam;
  if constexpr (std::is_floating_point_v<T>) {
    std::mt19937_64 rng(TestSeed() + 11);
    const T nan = std::numeric_limits<T>::quiet_NaN(), inf = std::numeric_limits<T>::infinity();
    for (const Shape& s : {Shape{37, 129}, Shape{1, 100001}, Shape{4099, 5}, Shape{256, 8192}}) {
      if (LeanSkips(s.rows * s.cols)) continue;
      const uint64_t n = s.rows * s.cols;
      std::vector<T> zeros(n);
      for (auto& z : zeros) z = (rng() & 1) ? T(-0.0) : T(0.0);
      std::vector<T> all_neg(n, T(-0.0)), all_pos(n, T(0.0));
      std::vector<T> with_nan = RandomValues<T>(n, rng);
      with_nan[0] = nan;
      with_nan[n - 1] = nan;
      for (int k = 0; k < 5; ++k) with_nan[rng() % n] = nan;
      std::vector<T> with_inf = RandomValues<T>(n, rng);
      for (int k = 0; k < 50; ++k) with_inf[rng() % n] = (k & 1) ? inf : -inf;
      int which = 0;
      for (const std::vector<T>* x : {&zeros, &all_neg, &all_pos, &with_nan, &with_inf}) {
        SCOPED_TRACE(::testing::Message() << "seed " << TestSeed() << ", " << ShapeName(s.rows, s.cols)
                                          << ", pattern " << which++);
        for (uint64_t offset : {uint64_t{0}, uint64_t{1}}) {
          Placed in = PlaceOnDevice(x->data(), n * sizeof(T), offset * sizeof(T));
          CheckAllOpsDims(*x, in.at, s.rows, s.cols);
        }
      }
    }
  }
}

// Same input, same device: the same bits, run after run (float sums over many blocks).
TYPED_TEST(CudaReduceTyped, DeterministicBits) {
  HISTD_REQUIRE_GPU();
  using T = TypeParam;
  using R = SumOf<T>;
  std::mt19937_64 rng(TestSeed() + 13);
  const uint64_t flat = Scaled((1u << 22) + 12345, 65537), odd = Scaled(113359, 1771);
  for (const Shape& s : {Shape{1, flat}, Shape{37, odd}, Shape{odd, 37}}) {
    const std::vector<T> x = RandomValues<T>(s.rows * s.cols, rng);
    Placed in = PlaceOnDevice(x.data(), x.size() * sizeof(T), sizeof(T));
    for (Dim dim : kDims) {
      SCOPED_TRACE(::testing::Message() << "seed " << TestSeed() << ", " << ShapeName(s.rows, s.cols)
                                        << ", " << DimName(dim));
      const uint64_t outs = OutputCount(s.rows, s.cols, dim);
      std::vector<R> first;
      for (int run = 0; run < 3; ++run) {
        absl::StatusOr<DeviceBuffer> out = DeviceBuffer::Allocate(outs * sizeof(R));
        ASSERT_TRUE(out.ok());
        PoisonDevice(out->get(), outs * sizeof(R));
        ReduceArgs a{in.at, DTypeOf<T>(), s.rows, s.cols, Op::kSum, dim, out->get()};
        ASSERT_TRUE(RunReduce(a).ok());
        std::vector<R> got = CopyBack<R>(out->get(), outs);
        if (run == 0) {
          first = got;
        } else {
          ASSERT_EQ(std::memcmp(first.data(), got.data(), outs * sizeof(R)), 0) << "run " << run;
        }
      }
    }
  }
}

TEST(CudaReduce, EmptyExtents) {
  HISTD_REQUIRE_GPU();
  absl::StatusOr<DeviceBuffer> in = DeviceBuffer::Allocate(64);
  absl::StatusOr<DeviceBuffer> out = DeviceBuffer::Allocate(64);
  ASSERT_TRUE(in.ok() && out.ok());
  struct Case { uint64_t rows, cols; Dim dim; uint64_t outs; };
  for (const Case& c : {Case{0, 0, Dim::kAll, 1}, Case{0, 5, Dim::kRows, 5}, Case{5, 0, Dim::kCols, 5},
                        Case{0, 5, Dim::kAll, 1}, Case{0, 5, Dim::kCols, 0}, Case{5, 0, Dim::kRows, 0}}) {
    SCOPED_TRACE(ShapeName(c.rows, c.cols) + " " + DimName(c.dim));
    PoisonDevice(out->get(), 64);
    ReduceArgs a{in->get(), DType::kF32, c.rows, c.cols, Op::kSum, c.dim, out->get()};
    ASSERT_TRUE(RunReduce(a).ok()) << RunReduce(a);
    const std::vector<uint8_t> bytes = CopyBack<uint8_t>(out->get(), 64);
    for (uint64_t i = 0; i < 64; ++i) {
      EXPECT_EQ(bytes[i], i < c.outs * 4 ? 0 : 0xA5) << "byte " << i;  // zeros, nothing beyond
    }
    for (Op op : {Op::kMin, Op::kMax}) {
      a.op = op;
      const absl::Status s = DeviceReduce::can_implement(a);
      if (c.outs > 0) {
        EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
      } else {
        EXPECT_TRUE(s.ok()) << s;  // nothing to compute
      }
    }
  }
}

TEST(CudaReduce, RejectsBadArguments) {
  HISTD_REQUIRE_GPU();
  absl::StatusOr<DeviceBuffer> buf = DeviceBuffer::Allocate(1 << 20);
  ASSERT_TRUE(buf.ok());
  uint8_t* p = buf->as<uint8_t>();
  ReduceArgs good{p, DType::kF32, 100, 100, Op::kSum, Dim::kAll, p + 65536};
  EXPECT_TRUE(DeviceReduce::can_implement(good).ok());
  ReduceArgs a = good;
  a.input = p + 2;  // not 4-byte aligned
  EXPECT_EQ(DeviceReduce::can_implement(a).code(), absl::StatusCode::kInvalidArgument);
  a = good;
  a.output = nullptr;
  EXPECT_EQ(DeviceReduce::can_implement(a).code(), absl::StatusCode::kInvalidArgument);
  a = good;
  a.output = p + 65537;  // f32 result not aligned
  EXPECT_EQ(DeviceReduce::can_implement(a).code(), absl::StatusCode::kInvalidArgument);
  a = good;
  a.rows = a.cols = uint64_t{1} << 40;  // rows * cols * 8 overflows
  EXPECT_EQ(DeviceReduce::can_implement(a).code(), absl::StatusCode::kInvalidArgument);
  a = good;
  a.dtype = static_cast<DType>(99);
  EXPECT_EQ(DeviceReduce::can_implement(a).code(), absl::StatusCode::kInvalidArgument);
  a = good;
  a.op = static_cast<Op>(9);
  EXPECT_EQ(DeviceReduce::can_implement(a).code(), absl::StatusCode::kInvalidArgument);
  // A missing or misaligned workspace is refused, not written through; refused args need none.
  a = good;
  a.rows = 1;
  a.cols = 1 << 18;
  const size_t need = DeviceReduce::get_workspace_size(a);
  ASSERT_GT(need, 0u);
  EXPECT_EQ(DeviceReduce::run(a, nullptr, nullptr).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(DeviceReduce::run(a, p + 300004, nullptr).code(), absl::StatusCode::kInvalidArgument);
  a.op = static_cast<Op>(9);
  EXPECT_EQ(DeviceReduce::get_workspace_size(a), 0u);
}

}  // namespace
}  // namespace histd::testing::rs
