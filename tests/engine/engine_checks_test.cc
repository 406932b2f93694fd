// The shared engine checks (engine/engine_checks.cc) and ReadBins' output shape: every
// rule, its status code, and that the message names the values.
#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "engine/engine.h"
#include "tests/engine/engine_test_util.h"

namespace histd {
namespace {

using testing::Spec;

// A histogram that only has a shape: enough for the checks, which never touch bins.
class ShapeOnlyHistogram : public HistogramStorage {
 public:
  explicit ShapeOnlyHistogram(HistogramShape shape) : HistogramStorage(shape) {}
  uint64_t bytes_used() const override { return 0; }
};

void ExpectInvalid(const absl::Status& s, const std::string& part) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(std::string(s.message()).find(part), std::string::npos)
      << "message: " << s.message() << "\nexpected to contain: " << part;
}

TEST(ReadBinsShapeTest, UnitFactorsGiveTheRegionAsU8) {
  const ReadSpec spec = Spec(3, 10, 5, 6);
  EXPECT_EQ(ReadBinsRows(spec), 7u);
  EXPECT_EQ(ReadBinsCols(spec), 1u);
  EXPECT_EQ(ReadBinsType(spec), DType::kU8);
  EXPECT_EQ(ReadBinsBytes(spec), 7u);
}

TEST(ReadBinsShapeTest, FactorsRoundUpPartialBlocksAndGiveU32) {
  const ReadSpec spec = Spec(0, 10, 0, 33, 3, 4);  // 10/3 -> 4, 33/4 -> 9
  EXPECT_EQ(ReadBinsRows(spec), 4u);
  EXPECT_EQ(ReadBinsCols(spec), 9u);
  EXPECT_EQ(ReadBinsType(spec), DType::kU32);
  EXPECT_EQ(ReadBinsBytes(spec), 4u * 9u * 4u);
  EXPECT_EQ(ReadBinsType(Spec(0, 10, 0, 33, 1, 2)), DType::kU32);
  EXPECT_EQ(ReadBinsType(Spec(0, 10, 0, 33, 2, 1)), DType::kU32);
}

TEST(ReadBinsShapeTest, TransposeSwapsTheShape) {
  const ReadSpec spec = Spec(0, 10, 0, 33, 3, 4, true);
  EXPECT_EQ(ReadBinsRows(spec), 9u);
  EXPECT_EQ(ReadBinsCols(spec), 4u);
  EXPECT_EQ(ReadBinsBytes(spec), 4u * 9u * 4u);
}

TEST(ReadBinsShapeTest, LargestRegionDoesNotOverflow) {
  const uint32_t max = std::numeric_limits<uint32_t>::max();
  const ReadSpec spec = Spec(0, max, 0, max);
  EXPECT_EQ(ReadBinsBytes(spec), uint64_t{max} * max);
}

ReadSpec View(uint32_t rows, uint32_t cols, uint32_t out_rows, uint32_t out_cols,
              PoolOp pool = PoolOp::kSum) {
  ReadSpec spec = Spec(0, rows, 0, cols);
  spec.out_rows = out_rows;
  spec.out_cols = out_cols;
  spec.pool = pool;
  return spec;
}

TEST(BlockAxisTest, CellsCutAtFloorOfIExtentOverCells) {
  // 10 bins into 4 cells: floor(0), floor(2.5), floor(5), floor(7.5), floor(10).
  const BlockAxis axis{10, 1, 4};
  EXPECT_EQ(axis.count(), 4u);
  const uint64_t begins[] = {0, 2, 5, 7}, ends[] = {2, 5, 7, 10};
  for (uint64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(axis.begin(i), begins[i]) << i;
    EXPECT_EQ(axis.end(i), ends[i]) << i;
  }
  EXPECT_EQ(axis.largest_block(), 3u);
}

TEST(BlockAxisTest, CellsTileTheExtentWithFloorOrCeilSizes) {
  const uint32_t max = std::numeric_limits<uint32_t>::max();
  for (auto [extent, cells] : {std::pair<uint32_t, uint32_t>{8192, 1000}, {8192, 1024}, {256, 255},
                               {7, 7}, {1, 1}, {1000, 1}, {max, 3}, {max, max - 1}}) {
    const BlockAxis axis{extent, 1, cells};
    const uint64_t small = extent / cells, large = (uint64_t{extent} + cells - 1) / cells;
    EXPECT_EQ(axis.begin(0), 0u);
    // Large extents: the first and last thousand cells.
    for (uint64_t i = 0; i < cells; i = (i == 999 && cells > 2000) ? cells - 1000 : i + 1) {
      const uint64_t size = axis.end(i) - axis.begin(i);
      EXPECT_TRUE(size == small || size == large) << extent << " / " << cells << " cell " << i;
      if (i + 1 < cells) EXPECT_EQ(axis.begin(i + 1), axis.end(i)) << extent << " / " << cells;
    }
    EXPECT_EQ(axis.end(cells - 1), extent);
    EXPECT_EQ(axis.largest_block(), large);
  }
}

TEST(ReadBinsShapeTest, PooledViewsHaveTheirOutSize) {
  const ReadSpec sum = View(256, 8192, 100, 1000);
  EXPECT_EQ(ReadBinsRows(sum), 100u);
  EXPECT_EQ(ReadBinsCols(sum), 1000u);
  EXPECT_EQ(ReadBinsType(sum), DType::kU32);
  EXPECT_EQ(ReadBinsBytes(sum), 100u * 1000u * 4u);
  const ReadSpec max = View(256, 8192, 100, 1000, PoolOp::kMax);
  EXPECT_EQ(ReadBinsType(max), DType::kU8);
  EXPECT_EQ(ReadBinsBytes(max), 100u * 1000u);
  EXPECT_FALSE(ReadBinsAsStored(max));
  EXPECT_TRUE(ReadBinsAsStored(View(256, 8192, 256, 8192, PoolOp::kMax)));
  ReadSpec one_dimension = View(256, 8192, 0, 1000);  // rows by factor 2, cols to 1000
  one_dimension.row_factor = 2;
  one_dimension.transpose = true;
  EXPECT_EQ(ReadBinsRows(one_dimension), 1000u);
  EXPECT_EQ(ReadBinsCols(one_dimension), 128u);
}

TEST(CheckReadSpecTest, PooledViewsAreAtMostTheRegionAndCutOneWay) {
  const HistogramShape shape{256, 8192, 255};
  EXPECT_TRUE(CheckReadSpec(shape, View(256, 8192, 256, 8192)).ok());
  EXPECT_TRUE(CheckReadSpec(shape, View(256, 8192, 1, 1)).ok());
  ExpectInvalid(CheckReadSpec(shape, View(256, 8192, 257, 10)), "out_rows 257 exceeds");
  ExpectInvalid(CheckReadSpec(shape, View(256, 8192, 10, 8193)), "out_cols 8193 exceeds");
  ReadSpec both = View(256, 8192, 10, 10);
  both.row_factor = 3;
  ExpectInvalid(CheckReadSpec(shape, both), "out_rows 10 and a rows factor of 3");
}

TEST(CheckReadSpecTest, PooledSumsThatCouldOverflowU32AreRefusedAndMaximaAreNot) {
  const HistogramShape shape{8192, 8192, 255};
  // One block of 2^26 bins at 255 sums past 2^32; its maximum is one byte.
  ExpectInvalid(CheckReadSpec(shape, View(8192, 8192, 1, 1)), "uint32");
  EXPECT_TRUE(CheckReadSpec(shape, View(8192, 8192, 1, 1, PoolOp::kMax)).ok());
  // 8192 / 3 -> blocks of up to 2731 x 2731 bins: 7.46e6 x 255 < 2^32.
  EXPECT_TRUE(CheckReadSpec(shape, View(8192, 8192, 3, 3)).ok());
}

TEST(CheckHistogramShapeTest, AcceptsSmallestAndLargest) {
  EXPECT_TRUE(CheckHistogramShape(HistogramShape{1, 1, 1}).ok());
  EXPECT_TRUE(CheckHistogramShape(HistogramShape{256, 8192, 255}).ok());
  EXPECT_TRUE(CheckHistogramShape(HistogramShape{1u << 15, 1u << 16, 255}).ok());  // kMaxHistogramBins
  EXPECT_TRUE(CheckHistogramShape(HistogramShape{1, 1u << 31, 255}).ok());
}

TEST(CheckHistogramShapeTest, RejectsMoreThanTheLargest) {
  ExpectInvalid(CheckHistogramShape(HistogramShape{1, (1u << 31) + 1, 255}),
                "1 x 2147483649 = 2147483649 bins exceeds the largest histogram, 2147483648 bins");
  ExpectInvalid(CheckHistogramShape(HistogramShape{46341, 46341, 255}), "exceeds the largest histogram");
  const uint32_t max = std::numeric_limits<uint32_t>::max();
  const HistogramShape huge{max, max, 255};
  EXPECT_EQ(huge.bins(), uint64_t{max} * max);  // computed in 64 bits, no overflow
  ExpectInvalid(CheckHistogramShape(huge), "exceeds the largest histogram");
}

TEST(CheckHistogramShapeTest, RejectsZeroRowsColsAndCap) {
  ExpectInvalid(CheckHistogramShape(HistogramShape{0, 5, 255}), "rows must be >= 1, got 0");
  ExpectInvalid(CheckHistogramShape(HistogramShape{5, 0, 255}), "cols must be >= 1, got 0");
  ExpectInvalid(CheckHistogramShape(HistogramShape{5, 5, 0}), "cap must be in 1..255, got 0");
}

TEST(CheckReadSpecTest, AcceptsWholeAndPartialRegions) {
  const HistogramShape shape{256, 8192, 255};
  EXPECT_TRUE(CheckReadSpec(shape, Spec(0, 256, 0, 8192)).ok());
  EXPECT_TRUE(CheckReadSpec(shape, Spec(255, 256, 8191, 8192)).ok());
  EXPECT_TRUE(CheckReadSpec(shape, Spec(3, 200, 7, 1000, 7, 1000, true)).ok());
}

TEST(CheckReadSpecTest, RejectsRegionsOutsideTheHistogram) {
  const HistogramShape shape{256, 8192, 255};
  ExpectInvalid(CheckReadSpec(shape, Spec(3, 300, 0, 10)),
                "region rows [3, 300) exceed the histogram's 256 rows");
  ExpectInvalid(CheckReadSpec(shape, Spec(0, 10, 8000, 8193)),
                "region cols [8000, 8193) exceed the histogram's 8192 cols");
  ExpectInvalid(CheckReadSpec(shape, Spec(6, 5, 0, 10)),
                "region rows [6, 5) end before they begin");
  ExpectInvalid(CheckReadSpec(shape, Spec(0, 5, 9, 8)),
                "region cols [9, 8) end before they begin");
  ExpectInvalid(CheckReadSpec(shape, Spec(257, 257, 0, 10)),
                "region rows [257, 257) exceed the histogram's 256 rows");
}

// Regression (issue 31, 7): an empty region is an empty read, as numpy's a[5:5] is.
TEST(CheckReadSpecTest, AcceptsEmptyRegions) {
  const HistogramShape shape{256, 8192, 255};
  for (const ReadSpec& spec : {Spec(5, 5, 0, 10), Spec(0, 5, 9, 9), Spec(0, 0, 0, 0),
                               Spec(256, 256, 8192, 8192), Spec(3, 3, 0, 8192, 4, 4, true)}) {
    EXPECT_TRUE(CheckReadSpec(shape, spec).ok());
    EXPECT_EQ(ReadBinsBytes(spec), 0u);
  }
  EXPECT_EQ(ReadBinsCols(Spec(5, 5, 0, 10)), 10u);  // 0 x 10
  EXPECT_EQ(ReadBinsRows(Spec(5, 5, 0, 10)), 0u);
}

TEST(CheckReadSpecTest, RejectsZeroFactors) {
  const HistogramShape shape{16, 16, 255};
  ExpectInvalid(CheckReadSpec(shape, Spec(0, 16, 0, 16, 0, 1)), "row_factor 0");
  ExpectInvalid(CheckReadSpec(shape, Spec(0, 16, 0, 16, 1, 0)), "col_factor 0");
}

TEST(CheckReadSpecTest, RejectsBlocksWhoseSumCouldOverflowU32) {
  const uint32_t max = std::numeric_limits<uint32_t>::max();
  const HistogramShape shape{max, max, 255};
  // 65536 x 65536 bins of 255 sum past 2^32.
  ExpectInvalid(CheckReadSpec(shape, Spec(0, 65536, 0, 65536, 65536, 65536)), "uint32");
  // The block is clipped to the region: a huge factor over a small region is fine.
  EXPECT_TRUE(CheckReadSpec(shape, Spec(0, 16, 0, 16, max, max)).ok());
  // At cap 1 the same block fits.
  EXPECT_TRUE(CheckReadSpec(HistogramShape{max, max, 1},
                            Spec(0, 65535, 0, 65535, 65535, 65535)).ok());
}

TEST(CheckArrayTest, AcceptsHostArraysAndMatchingHistograms) {
  float data[6] = {};
  EXPECT_TRUE(CheckArray(ArrayRef{DType::kF32, 2, 3, data, nullptr}).ok());
  EXPECT_TRUE(CheckArray(ArrayRef{DType::kF32, 0, 3, nullptr, nullptr}).ok());  // empty
  ShapeOnlyHistogram h(HistogramShape{4, 5, 255});
  EXPECT_TRUE(CheckArray(ArrayRef{DType::kU8, 4, 5, nullptr, &h}).ok());
}

TEST(CheckArrayTest, RejectsBothOrNoSource) {
  float data[6] = {};
  ShapeOnlyHistogram h(HistogramShape{2, 3, 255});
  ExpectInvalid(CheckArray(ArrayRef{DType::kU8, 2, 3, data, &h}), "exactly one source");
  ExpectInvalid(CheckArray(ArrayRef{DType::kF32, 2, 3, nullptr, nullptr}), "no data");
}

TEST(CheckArrayTest, RejectsHistogramsWithOtherDtypeOrShape) {
  ShapeOnlyHistogram h(HistogramShape{4, 5, 255});
  ExpectInvalid(CheckArray(ArrayRef{DType::kF32, 4, 5, nullptr, &h}), "dtype u8, got f32");
  ExpectInvalid(CheckArray(ArrayRef{DType::kU8, 5, 4, nullptr, &h}),
                "array shape 5 x 4 does not match its histogram's 4 x 5");
}

TEST(CheckArrayTest, RejectsSizesThatOverflow64Bits) {
  const char byte = 0;
  const uint64_t big = uint64_t{1} << 32;
  ExpectInvalid(CheckArray(ArrayRef{DType::kU8, big, big, &byte, nullptr}), "overflows");
  // 2^31 x 2^31 elements fit, but not times 8 bytes.
  const uint64_t half = uint64_t{1} << 31;
  EXPECT_TRUE(CheckArray(ArrayRef{DType::kU8, half, half, &byte, nullptr}).ok());
  ExpectInvalid(CheckArray(ArrayRef{DType::kF64, half, half * 4, &byte, nullptr}),
                "overflows");
}

TEST(CheckArrayTest, RejectsUnknownDtype) {
  const char byte = 0;
  ExpectInvalid(CheckArray(ArrayRef{static_cast<DType>(99), 1, 1, &byte, nullptr}),
                "unknown array dtype 99");
}

TEST(CheckReduceTest, SumOfEmptyIsFineMinMaxOfEmptyExtentIsNot) {
  using Op = ReduceOp;
  const ArrayRef empty{DType::kI32, 0, 5, nullptr, nullptr};
  EXPECT_TRUE(CheckReduce(empty, Op::kSum, Dim::kAll).ok());
  EXPECT_TRUE(CheckReduce(empty, Op::kSum, Dim::kRows).ok());
  ExpectInvalid(CheckReduce(empty, Op::kMin, Dim::kAll), "min over all elements of a 0 x 5");
  ExpectInvalid(CheckReduce(empty, Op::kMax, Dim::kRows), "max over the rows of a 0 x 5");
  // Collapsing the columns of 0 x 5: each (there are none) output reduces 5 elements.
  EXPECT_TRUE(CheckReduce(empty, Op::kMin, Dim::kCols).ok());
  const ArrayRef no_cols{DType::kI32, 5, 0, nullptr, nullptr};
  ExpectInvalid(CheckReduce(no_cols, Op::kMin, Dim::kCols), "over the columns of a 5 x 0");
  EXPECT_TRUE(CheckReduce(no_cols, Op::kMax, Dim::kRows).ok());
}

TEST(CheckReduceTest, RejectsUnknownOpDimAndBadArrays) {
  int32_t data[4] = {};
  const ArrayRef a{DType::kI32, 2, 2, data, nullptr};
  ExpectInvalid(CheckReduce(a, static_cast<ReduceOp>(7), Dim::kAll), "reduce op 7");
  ExpectInvalid(CheckReduce(a, ReduceOp::kSum, static_cast<Dim>(9)), "dimension 9");
  ExpectInvalid(CheckReduce(ArrayRef{DType::kI32, 2, 2, nullptr, nullptr},
                            ReduceOp::kSum, Dim::kAll),
                "no data");
}

MatmulArgs Args(ArrayRef a, ArrayRef b, const float* c = nullptr, float beta = 0.0f) {
  MatmulArgs args;
  args.a = a;
  args.b = b;
  args.c = c;
  args.beta = beta;
  return args;
}

TEST(CheckMatmulTest, AcceptsFloatAndHistogramOperands) {
  float a[6] = {}, b[12] = {}, c[8] = {};
  ShapeOnlyHistogram h(HistogramShape{3, 4, 255});
  EXPECT_TRUE(CheckMatmul(Args({DType::kF32, 2, 3, a, nullptr}, {DType::kF32, 3, 4, b, nullptr})).ok());
  EXPECT_TRUE(CheckMatmul(Args({DType::kF32, 2, 3, a, nullptr}, {DType::kU8, 3, 4, nullptr, &h},
                               c, 0.5f)).ok());
  EXPECT_TRUE(CheckMatmul(Args({DType::kF32, 0, 3, nullptr, nullptr}, {DType::kF32, 3, 4, b, nullptr},
                               nullptr, 1.0f)).ok());  // empty result needs no c
}

TEST(CheckMatmulTest, RejectsDisagreeingInnerDimensions) {
  float a[6] = {}, b[12] = {};
  ExpectInvalid(CheckMatmul(Args({DType::kF32, 2, 3, a, nullptr}, {DType::kF32, 4, 3, b, nullptr})),
                "a is 2 x 3, b is 4 x 3 (a cols 3 != b rows 4)");
}

TEST(CheckMatmulTest, RejectsNonFloatOperands) {
  int32_t a[6] = {};
  float b[12] = {};
  ExpectInvalid(CheckMatmul(Args({DType::kI32, 2, 3, a, nullptr}, {DType::kF32, 3, 4, b, nullptr})),
                "matmul a must be f32 or a histogram, got i32");
  ExpectInvalid(CheckMatmul(Args({DType::kF32, 3, 4, b, nullptr}, {DType::kU8, 4, 1, a, nullptr})),
                "matmul b must be f32 or a histogram, got u8");
  ExpectInvalid(CheckMatmul(Args({DType::kF32, 3, 4, nullptr, nullptr}, {DType::kF32, 4, 1, b, nullptr})),
                "matmul a: array of 3 x 4 has no data");
}

TEST(CheckMatmulTest, NeedsCWhenBetaIsNonZero) {
  float a[6] = {}, b[12] = {};
  ExpectInvalid(CheckMatmul(Args({DType::kF32, 2, 3, a, nullptr}, {DType::kF32, 3, 4, b, nullptr},
                                 nullptr, 0.5f)),
                "matmul c (2 x 4) is required when beta != 0 (beta = 0.5)");
}

}  // namespace
}  // namespace histd
