// Compute operations on adversarial shapes, on every engine: dimensions of 2^62 beside a
// zero, results whose byte size overflows 64 bits, and empty extents. Each answers at once
// with an exact result or INVALID_ARGUMENT; none loops over an extent without elements or
// allocates what it was not asked to return. Plus the result shapes the server sizes its
// checks from (ReduceResultShape and friends).
#include <cstdint>
#include <vector>

#include "absl/time/clock.h"
#include "model/checked_size.h"
#include "tests/engine/engine_test_util.h"

namespace histd::testing {
namespace {

constexpr uint64_t k2To62 = uint64_t{1} << 62;

ArrayRef Empty(DType dtype, uint64_t rows, uint64_t cols) {
  return ArrayRef{dtype, rows, cols, nullptr, nullptr};
}

TEST(CheckedSizeTest, OverflowIsInvalidArgumentNamingTheOperands) {
  EXPECT_EQ(*CheckedMul(uint64_t{1} << 32, uint64_t{1} << 31, "x"), uint64_t{1} << 63);
  absl::StatusOr<uint64_t> product = CheckedMul(uint64_t{1} << 32, uint64_t{1} << 32, "a size");
  ASSERT_EQ(product.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(product.status().message().find("a size"), std::string::npos);
  EXPECT_EQ(CheckedAdd(UINT64_MAX, 1, "y").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(*CheckedArrayBytes(3, 5, 8, "z"), 120u);
  EXPECT_FALSE(CheckedArrayBytes(k2To62, 1, 8, "z").ok());  // 2^65
  EXPECT_EQ(*CheckedArrayBytes(k2To62, 0, 8, "z"), 0u);
}

TEST(ResultShapeTest, ReduceGivesTheCollapsedShapeOrAnOverflow) {
  absl::StatusOr<ResultShape> s =
      ReduceResultShape(Empty(DType::kU8, 1000, 0), ReduceOp::kSum, Dim::kCols);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->dtype, DType::kU64);
  EXPECT_EQ(s->rows, 1000u);
  EXPECT_EQ(s->cols, 1u);
  EXPECT_EQ(s->bytes, 8000u);
  EXPECT_EQ(ReduceResultShape(Empty(DType::kU8, k2To62, 0), ReduceOp::kSum, Dim::kCols)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReduceResultShape(Empty(DType::kU8, 0, k2To62), ReduceOp::kSum, Dim::kRows)
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  // Along the other dimension the result is 1 x 1 or empty.
  EXPECT_EQ(
      ReduceResultShape(Empty(DType::kU8, k2To62, 0), ReduceOp::kSum, Dim::kRows)->bytes,
      0u);
  EXPECT_EQ(
      ReduceResultShape(Empty(DType::kU8, k2To62, 0), ReduceOp::kSum, Dim::kAll)->bytes,
      8u);
}

TEST(ResultShapeTest, ScanTransposeAndMatmul) {
  EXPECT_EQ(ScanResultShape(Empty(DType::kI32, k2To62, 0), Dim::kCols)->bytes, 0u);
  EXPECT_EQ(ScanResultShape(Empty(DType::kI32, 3, 0), Dim::kCols)->dtype, DType::kI64);
  absl::StatusOr<ResultShape> t = TransposeResultShape(Empty(DType::kF32, 0, k2To62));
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->rows, k2To62);
  EXPECT_EQ(t->cols, 0u);
  MatmulArgs mm;
  mm.a = Empty(DType::kF32, uint64_t{1} << 40, 0);
  mm.b = Empty(DType::kF32, 0, uint64_t{1} << 40);
  EXPECT_EQ(MatmulResultShape(mm).status().code(), absl::StatusCode::kInvalidArgument);
  mm.a = Empty(DType::kF32, 16384, 0);
  mm.b = Empty(DType::kF32, 0, 16384);
  EXPECT_EQ(MatmulResultShape(mm)->bytes, uint64_t{1} << 30);
}

class ComputeShapesTest : public EngineTest {};
HISTD_INSTANTIATE_ENGINE_TEST(ComputeShapesTest);

TEST_P(ComputeShapesTest, OverflowingResultsAreInvalidArgument) {
  const ArrayRef tall = Empty(DType::kU8, k2To62, 0);
  EXPECT_EQ(engine().Reduce(tall, ReduceOp::kSum, Dim::kCols).status().code(),
            absl::StatusCode::kInvalidArgument);
  const ArrayRef wide = Empty(DType::kU8, 0, k2To62);
  EXPECT_EQ(engine().Reduce(wide, ReduceOp::kSum, Dim::kRows).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_P(ComputeShapesTest, EmptyInputsWithHugeDimensionsReturnAtOnce) {
  const absl::Time begin = absl::Now();
  const ArrayRef tall = Empty(DType::kU8, k2To62, 0);
  for (Dim along : {Dim::kAll, Dim::kRows, Dim::kCols}) {
    absl::StatusOr<HostArray> scan = engine().Scan(tall, true, along);
    ASSERT_TRUE(scan.ok()) << scan.status();
    EXPECT_EQ(scan->rows, k2To62);
    EXPECT_EQ(scan->cols, 0u);
    EXPECT_TRUE(scan->bytes.empty());
  }
  absl::StatusOr<HostArray> t = engine().Transpose(tall);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->rows, 0u);
  EXPECT_EQ(t->cols, k2To62);
  absl::StatusOr<HostArray> all = engine().Reduce(tall, ReduceOp::kSum, Dim::kAll);
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->bytes.size(), 8u);
  EXPECT_EQ(all->data<uint64_t>()[0], 0u);
  absl::StatusOr<HostArray> rows = engine().Reduce(tall, ReduceOp::kSum, Dim::kRows);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->rows, 1u);
  EXPECT_EQ(rows->cols, 0u);
  EXPECT_EQ(engine().Reduce(tall, ReduceOp::kMax, Dim::kAll).status().code(),
            absl::StatusCode::kInvalidArgument);  // no maximum of nothing
  MatmulArgs mm;
  mm.a = Empty(DType::kF32, k2To62, 0);
  mm.b = Empty(DType::kF32, 0, 0);
  absl::StatusOr<HostArray> product = engine().Matmul(mm);
  ASSERT_TRUE(product.ok()) << product.status();
  EXPECT_EQ(product->rows, k2To62);
  EXPECT_TRUE(product->bytes.empty());
  EXPECT_LT(absl::Now() - begin, absl::Seconds(2));
}

TEST_P(ComputeShapesTest, AnEmptyInnerDimensionGivesBetaTimesC) {
  MatmulArgs mm;
  mm.a = Empty(DType::kF32, 3, 0);
  mm.b = Empty(DType::kF32, 0, 2);
  const std::vector<float> c = {1, 2, 3, 4, 5, 6};
  mm.c = c.data();
  mm.alpha = 7.0f;
  mm.beta = 0.5f;
  absl::StatusOr<HostArray> out = engine().Matmul(mm);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->bytes.size(), 24u);
  for (size_t i = 0; i < c.size(); ++i) EXPECT_EQ(out->data<float>()[i], 0.5f * c[i]) << i;
}

}  // namespace
}  // namespace histd::testing
