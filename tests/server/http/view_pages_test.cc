// The view pages' parameters (server/http/view_pages.h): what a /render/<name>.png query
// asks for, defaults and refusals. The pages themselves run in a real browser in
// client/python/tests/test_page.py.
#include "server/http/view_pages.h"

#include <map>
#include <string>

#include <gtest/gtest.h>

namespace histd::server {
namespace {

using Params = std::multimap<std::string, std::string>;
const HistogramShape kShape{256, 8192, 255};

TEST(RenderSpecFromQueryTest, EveryParameter) {
  absl::StatusOr<RenderSpec> spec = RenderSpecFromQuery(
      "wafer",
      Params{{"width", "300"}, {"height", "70"}, {"rows", "10:74"}, {"cols", ":512"},
             {"scale", "log"}, {"zmin", "2"}, {"zmax", "1e3"}, {"pool", "max"}, {"bare", "1"}},
      kShape);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->name, "wafer");
  EXPECT_EQ(spec->heatmap.width, 300u);
  EXPECT_EQ(spec->heatmap.height, 70u);
  EXPECT_EQ(spec->region.row_begin, 10u);
  EXPECT_EQ(spec->region.row_end, 74u);
  EXPECT_EQ(spec->region.col_begin, 0u);
  EXPECT_EQ(spec->region.col_end, 512u);
  EXPECT_EQ(spec->heatmap.scale, ColorScale::kLog);
  EXPECT_EQ(spec->heatmap.zmin, 2.0);
  EXPECT_EQ(spec->heatmap.zmax, 1000.0);
  EXPECT_EQ(spec->pool, PoolOp::kMax);
  EXPECT_FALSE(spec->heatmap.frame);
}

TEST(RenderSpecFromQueryTest, DefaultsAreTheWholeHistogramAtMost1024PixelsFramedLinearSum) {
  absl::StatusOr<RenderSpec> spec = RenderSpecFromQuery("w", Params{}, kShape);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->region.rows(), 256u);
  EXPECT_EQ(spec->region.cols(), 8192u);
  EXPECT_EQ(spec->heatmap.width, 1024u);
  EXPECT_EQ(spec->heatmap.height, 256u);
  EXPECT_EQ(spec->heatmap.scale, ColorScale::kLinear);
  EXPECT_FALSE(spec->heatmap.zmin.has_value());
  EXPECT_FALSE(spec->heatmap.zmax.has_value());
  EXPECT_EQ(spec->pool, PoolOp::kSum);
  EXPECT_TRUE(spec->heatmap.frame);
  spec = RenderSpecFromQuery("w", Params{{"rows", "100:110"}, {"cols", "5:"}}, kShape);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->heatmap.height, 10u);  // the region's rows
  EXPECT_EQ(spec->region.col_end, 8192u);
}

TEST(RenderSpecFromQueryTest, MalformedParametersAreInvalidArgument) {
  for (const Params& bad :
       {Params{{"width", "-3"}}, Params{{"width", "12px"}}, Params{{"height", "99999999999"}},
        Params{{"rows", "5"}}, Params{{"rows", "a:b"}}, Params{{"cols", "1:2:3"}},
        Params{{"scale", "cubic"}}, Params{{"pool", "median"}}, Params{{"zmin", "nan"}},
        Params{{"zmax", "inf"}}, Params{{"zmax", "x"}}, Params{{"bare", "yes"}}}) {
    absl::StatusOr<RenderSpec> spec = RenderSpecFromQuery("w", bad, kShape);
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument)
        << bad.begin()->first << "=" << bad.begin()->second;
  }
}

}  // namespace
}  // namespace histd::server
