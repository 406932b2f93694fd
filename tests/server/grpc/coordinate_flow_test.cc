// Coordinates through the daemon: non-finite values are flow, not errors (-inf underflow,
// +inf overflow, NaN counted per axis in x_nan / y_nan), one NaN no longer costs the
// message, and axes that float32 arithmetic could not bin (very wide, very narrow) are
// accepted and bin exactly, on both engines.
#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "tests/server/grpc/service_fixture.h"

namespace histd::server::testing {
namespace {

class CoordinateFlowTest : public ServiceTest {
 protected:
  grpc::Status CreateWithAxes(const std::string& name, uint32_t rows, uint32_t cols, float x_lo,
                              float x_hi, float y_lo, float y_hi) {
    v1::HistogramSpec spec;
    spec.set_name(name);
    spec.set_rows(rows);
    spec.set_cols(cols);
    spec.set_cap(255);
    spec.mutable_x_axis()->set_lo(x_lo);
    spec.mutable_x_axis()->set_hi(x_hi);
    spec.mutable_y_axis()->set_lo(y_lo);
    spec.mutable_y_axis()->set_hi(y_hi);
    return CreateSpec(spec);
  }
  v1::IngestResponse IngestPairs(const std::string& name,
                                 const std::vector<std::pair<float, float>>& pairs) {
    v1::IngestRequest r;
    r.set_sequence(1);
    r.set_histogram(name);
    r.set_type(v1::SAMPLE_TYPE_XY_F32);
    r.set_samples(PackXY(pairs));
    return IngestOne(r);
  }
};
HISTD_INSTANTIATE_ENGINES(CoordinateFlowTest);

TEST_P(CoordinateFlowTest, NonFiniteCoordinatesAreFlowAndTheRestIsApplied) {
  ASSERT_TRUE(CreateWithAxes("h", 4, 4, 0.0f, 1.0f, 0.0f, 1.0f).ok());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const v1::IngestResponse ack = IngestPairs(
      "h", {{0.1f, 0.1f},   // bin (0, 0)
            {nan, 0.6f},    // x NaN
            {0.6f, nan},    // y NaN
            {nan, nan},     // both NaN
            {-inf, 0.1f},   // x underflow
            {inf, 0.1f},    // x overflow
            {0.1f, -inf},   // y underflow
            {0.1f, inf},    // y overflow
            {nan, inf},     // x NaN and y overflow
            {0.9f, 0.9f}}); // bin (3, 3)
  ASSERT_EQ(ack.code(), grpc::StatusCode::OK) << ack.message();
  EXPECT_EQ(ack.samples(), 10u);
  const v1::HistogramInfo info = Info("h");
  EXPECT_EQ(info.samples_applied(), 2u);
  EXPECT_EQ(info.samples_outside(), 8u);
  EXPECT_EQ(info.x_nan(), 3u);
  EXPECT_EQ(info.y_nan(), 2u);
  EXPECT_EQ(info.x_underflow(), 1u);
  EXPECT_EQ(info.x_overflow(), 1u);
  EXPECT_EQ(info.y_underflow(), 1u);
  EXPECT_EQ(info.y_overflow(), 2u);
  const std::string bins = QueryWhole("h").data;
  ASSERT_EQ(bins.size(), 16u);
  EXPECT_EQ(bins[0], 1);
  EXPECT_EQ(bins[15], 1);
  EXPECT_EQ(info.total_count(), 2u);
}

TEST_P(CoordinateFlowTest, WideAndNarrowAxesAreAcceptedAndBinExactly) {
  // [-2e38, 2e38): its width overflows float32; it was accepted and then unusable.
  ASSERT_TRUE(CreateWithAxes("wide", 1, 1000, -2e38f, 2e38f, 0.0f, 1.0f).ok());
  v1::IngestResponse ack = IngestPairs("wide", {{-1e-45f, 0.5f}, {0.0f, 0.5f}, {1e38f, 0.5f}});
  ASSERT_EQ(ack.code(), grpc::StatusCode::OK) << ack.message();
  std::string bins = QueryWhole("wide").data;
  ASSERT_EQ(bins.size(), 1000u);
  EXPECT_EQ(bins[499], 1);  // just below the zero edge
  EXPECT_EQ(bins[500], 1);  // zero is the edge of bin 500
  EXPECT_EQ(bins[750], 1);  // 1e38 = edge 750
  // [0, 1e-38) with 1000 columns: everything went to column 0.
  ASSERT_TRUE(CreateWithAxes("narrow", 1, 1000, 0.0f, 1e-38f, 0.0f, 1.0f).ok());
  ack = IngestPairs("narrow", {{5e-39f, 0.5f}, {9e-39f, 0.5f}, {2.5e-39f, 0.5f}});
  ASSERT_EQ(ack.code(), grpc::StatusCode::OK) << ack.message();
  bins = QueryWhole("narrow").data;
  EXPECT_EQ(bins[500], 1);
  EXPECT_EQ(bins[900], 1);
  EXPECT_EQ(bins[250], 1);
  EXPECT_EQ(Info("narrow").samples_applied(), 3u);
}

TEST_P(CoordinateFlowTest, IntegerCoordinatesOnUnitBinsLandInTheirOwnBin) {
  // 22 unit bins over [0, 22): float64's (x - lo) / width * n puts 15 into bin 14.
  ASSERT_TRUE(CreateWithAxes("unit", 1, 22, 0.0f, 22.0f, 0.0f, 1.0f).ok());
  std::vector<std::pair<float, float>> pairs;
  for (int x = 0; x < 22; ++x) pairs.push_back({static_cast<float>(x), 0.5f});
  ASSERT_EQ(IngestPairs("unit", pairs).code(), grpc::StatusCode::OK);
  EXPECT_EQ(QueryWhole("unit").data, std::string(22, '\1'));
}

}  // namespace
}  // namespace histd::server::testing
