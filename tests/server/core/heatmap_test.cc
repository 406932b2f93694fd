// server/core/heatmap.h, server/core/png_encode.h and server/core/render.h without gRPC: colours of values
// under linear and log scales and zmin/zmax, saturated cells, pixel-to-cell mapping, the
// frame's size, option checks, and a whole render on the CPU engine decoded back with
// libpng's simplified reader (an independent decoder checks the same in
// client/python/tests/test_render.py).
#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "engine/engine_factory.h"
#include "server/core/heatmap.h"
#include "server/core/histogram_store.h"
#include "server/core/memory_budget.h"
#include "server/core/png_encode.h"
#include "server/core/pooled_view.h"
#include "server/core/render.h"

namespace histd::server {
namespace {

HeatmapView View(uint64_t rows, uint64_t cols, std::vector<uint64_t> values,
                 std::vector<uint8_t> saturated = {}) {
  HeatmapView view;
  view.rows = rows;
  view.cols = cols;
  view.values = std::move(values);
  view.saturated = saturated.empty() ? std::vector<uint8_t>(rows * cols, 0) : std::move(saturated);
  view.region = Region{0, uint32_t(rows), 0, uint32_t(cols)};
  view.shape = HistogramShape{uint32_t(rows), uint32_t(cols), 255};
  return view;
}

HeatmapOptions Bare(uint32_t width, uint32_t height) {
  HeatmapOptions options;
  options.width = width;
  options.height = height;
  options.frame = false;
  return options;
}

TEST(HeatmapTest, LinearColoursRunFromZminToZmax) {
  const ZRange range{0, 200};
  EXPECT_EQ(ValueColor(0, range, ColorScale::kLinear), kViridis[0]);
  EXPECT_EQ(ValueColor(200, range, ColorScale::kLinear), kViridis[255]);
  EXPECT_EQ(ValueColor(100, range, ColorScale::kLinear), kViridis[128]);  // round(127.5)
  EXPECT_EQ(ValueColor(20, range, ColorScale::kLinear), kViridis[26]);    // round(25.5)
  EXPECT_EQ(ValueColor(-5, range, ColorScale::kLinear), kViridis[0]);     // clamped
  EXPECT_EQ(ValueColor(1e9, range, ColorScale::kLinear), kViridis[255]);
}

TEST(HeatmapTest, LogColoursSpreadDecadesEvenly) {
  const ZRange range{1, 100};
  EXPECT_EQ(ValueColor(10, range, ColorScale::kLog), kViridis[128]);  // one decade of two
  EXPECT_EQ(ValueColor(1, range, ColorScale::kLog), kViridis[0]);
  EXPECT_EQ(ValueColor(100, range, ColorScale::kLog), kViridis[255]);
  EXPECT_EQ(ValueColor(0, range, ColorScale::kLog), kViridis[0]);  // empty: below any decade
}

TEST(HeatmapTest, DegenerateRangeShowsOnlyWhatIsAboveZmin) {
  const ZRange range{0, 0};  // an empty histogram
  EXPECT_EQ(ValueColor(0, range, ColorScale::kLinear), kViridis[0]);
  EXPECT_EQ(ValueColor(3, range, ColorScale::kLinear), kViridis[255]);
}

TEST(HeatmapTest, DefaultRangeIsZeroOrOneToTheLargestValue) {
  const HeatmapView view = View(1, 3, {0, 7, 40});
  HeatmapOptions options = Bare(3, 1);
  ZRange r = ResolveZRange(view, options);
  EXPECT_EQ(r.zmin, 0);
  EXPECT_EQ(r.zmax, 40);
  options.scale = ColorScale::kLog;
  r = ResolveZRange(view, options);
  EXPECT_EQ(r.zmin, 1);
  EXPECT_EQ(r.zmax, 40);
  options.zmin = 5;
  options.zmax = 9;
  r = ResolveZRange(view, options);
  EXPECT_EQ(r.zmin, 5);
  EXPECT_EQ(r.zmax, 9);
}

TEST(HeatmapTest, EachPixelShowsItsCellAndSaturatedCellsAreRed) {
  // 2 x 3 cells onto 6 x 4 pixels: cell (r, c) covers pixels x in [2c, 2c + 2), y in [2r, 2r + 2).
  const HeatmapView view = View(2, 3, {0, 50, 100, 25, 255, 75}, {0, 0, 0, 0, 1, 0});
  ZRange used;
  const Image image = DrawHeatmap(view, Bare(6, 4), &used);
  ASSERT_EQ(image.width, 6u);
  ASSERT_EQ(image.height, 4u);
  EXPECT_EQ(used.zmax, 255);
  for (uint32_t y = 0; y < 4; ++y) {
    for (uint32_t x = 0; x < 6; ++x) {
      const uint64_t cell = (y / 2) * 3 + x / 2;
      const Rgb expected = view.saturated[cell] ? kSaturatedRgb
                                                : ValueColor(double(view.values[cell]), used,
                                                             ColorScale::kLinear);
      EXPECT_EQ(image.at(x, y), expected) << x << ", " << y;
    }
  }
  EXPECT_EQ(image.at(2, 2), kSaturatedRgb);
  EXPECT_EQ(image.at(0, 0), kViridis[0]);
}

TEST(HeatmapTest, NoViridisEntryIsTheSaturatedColour) {
  for (const Rgb& c : kViridis) EXPECT_NE(c, kSaturatedRgb);
  // Viridis runs from dark purple to yellow (matplotlib's first and last entries).
  EXPECT_EQ(kViridis[0], (Rgb{68, 1, 84}));
  EXPECT_EQ(kViridis[255], (Rgb{253, 231, 37}));
}

TEST(HeatmapTest, FrameSurroundsTheHeatmapWithLabelsAndAColourBar) {
  const HeatmapView view = View(4, 8, std::vector<uint64_t>(32, 3));
  HeatmapOptions options = Bare(80, 40);
  options.frame = true;
  const HeatmapFrame f = FrameFor(options);
  const Image image = DrawHeatmap(view, options, nullptr);
  EXPECT_EQ(image.width, 80 + f.left + f.right);
  EXPECT_EQ(image.height, 40 + f.top + f.bottom);
  EXPECT_EQ(HeatmapImageBytes(options), uint64_t{image.width} * image.height * 3);
  // Every heatmap pixel is the one value's colour (all cells 3 = zmax: the top colour).
  for (uint32_t y = 0; y < 40; ++y)
    for (uint32_t x = 0; x < 80; ++x) ASSERT_EQ(image.at(f.left + x, f.top + y), kViridis[255]);
  // Labels: text pixels left of and below the heatmap; the colour bar runs from the top
  // colour down to the bottom one, with a saturated swatch above it.
  int text_left = 0, text_below = 0;
  for (uint32_t y = 0; y < image.height; ++y)
    for (uint32_t x = 0; x < f.left; ++x) text_left += image.at(x, y) == kTextRgb;
  for (uint32_t y = f.top + 40; y < image.height; ++y)
    for (uint32_t x = 0; x < image.width; ++x) text_below += image.at(x, y) == kTextRgb;
  EXPECT_GT(text_left, 50);
  EXPECT_GT(text_below, 50);
  const uint32_t bar_x = f.left + 80 + 8 + 7;
  EXPECT_EQ(image.at(bar_x, f.top), kViridis[255]);
  EXPECT_EQ(image.at(bar_x, f.top + 39), kViridis[0]);
  EXPECT_EQ(image.at(bar_x, f.top - 8), kSaturatedRgb);
}

TEST(HeatmapTest, OptionsAreChecked) {
  HeatmapOptions options = Bare(10, 10);
  EXPECT_TRUE(CheckHeatmapOptions(options, 4096).ok());
  options.width = 0;
  EXPECT_EQ(CheckHeatmapOptions(options, 4096).code(), absl::StatusCode::kInvalidArgument);
  options.width = 4097;
  EXPECT_EQ(CheckHeatmapOptions(options, 4096).code(), absl::StatusCode::kInvalidArgument);
  options.width = 10;
  options.zmin = 5;
  options.zmax = 5;
  EXPECT_EQ(CheckHeatmapOptions(options, 4096).code(), absl::StatusCode::kInvalidArgument);
  options.zmax = NAN;
  EXPECT_EQ(CheckHeatmapOptions(options, 4096).code(), absl::StatusCode::kInvalidArgument);
  options.zmax = 50;
  options.zmin = 0;
  EXPECT_TRUE(CheckHeatmapOptions(options, 4096).ok());
  options.scale = ColorScale::kLog;
  absl::Status s = CheckHeatmapOptions(options, 4096);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(s.message()).find("zmin > 0"), std::string::npos) << s;
}

// libpng's simplified reader: RGB pixels and the size.
Image DecodePng(const std::string& png) {
  png_image decoded{};
  decoded.version = PNG_IMAGE_VERSION;
  Image image;
  if (!png_image_begin_read_from_memory(&decoded, png.data(), png.size())) return image;
  decoded.format = PNG_FORMAT_RGB;
  image.width = decoded.width;
  image.height = decoded.height;
  image.rgb.resize(PNG_IMAGE_SIZE(decoded));
  if (!png_image_finish_read(&decoded, nullptr, image.rgb.data(), 0, nullptr)) return Image{};
  return image;
}

TEST(PngTest, EncodesEveryPixelLosslessly) {
  Image image;
  image.width = 37;
  image.height = 11;
  image.rgb.resize(37 * 11 * 3);
  std::mt19937 rng(3);
  for (uint8_t& b : image.rgb) b = uint8_t(rng());
  absl::StatusOr<std::string> png = EncodePng(image);
  ASSERT_TRUE(png.ok()) << png.status();
  EXPECT_EQ(png->substr(1, 3), "PNG");
  const Image back = DecodePng(*png);
  EXPECT_EQ(back.width, 37u);
  EXPECT_EQ(back.height, 11u);
  EXPECT_EQ(back.rgb, image.rgb);
}

// A CPU engine and store holding a histogram with a hot bin, a saturated bin and empty rows.
class RenderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    EngineOptions options;
    options.kind = EngineKind::kCpu;
    options.cpu_threads = 2;
    absl::StatusOr<std::unique_ptr<Engine>> engine = MakeEngine(options);
    ASSERT_TRUE(engine.ok()) << engine.status();
    engine_ = *std::move(engine);
    store_ = std::make_unique<HistogramStore>(*engine_, 16, uint64_t{1} << 24, &budget_);
    HistogramSpec spec;
    spec.name = "wafer";
    spec.shape = HistogramShape{64, 256, 200};
    spec.x_axis = AxisRange{-1.0f, 1.0f};
    absl::StatusOr<std::shared_ptr<HistogramEntry>> entry = store_->Create(spec);
    ASSERT_TRUE(entry.ok()) << entry.status();
    std::vector<uint8_t> bins(64 * 256, 0);
    bins[10 * 256 + 100] = 100;  // hot (4 x 4 block at 16 x 64 pixels: rows 8..11, cols 100..103)
    bins[40 * 256 + 20] = 200;   // saturated at cap 200
    bins[40 * 256 + 21] = 10;
    ASSERT_TRUE(engine_->MergeFromHost(bins.data(), (*entry)->storage()).ok());
  }

  RenderSpec Spec(uint32_t width, uint32_t height) {
    RenderSpec spec;
    spec.name = "wafer";
    spec.heatmap.width = width;
    spec.heatmap.height = height;
    spec.heatmap.frame = false;
    return spec;
  }

  MemoryBudget budget_{"host memory", "--max_memory_bytes", uint64_t{1} << 30};
  std::unique_ptr<Engine> engine_;
  std::unique_ptr<HistogramStore> store_;
};

TEST_F(RenderTest, PixelsOverAHotBinAnEmptyRegionAndASaturatedBin) {
  // 64 x 256 bins at 128 x 512 pixels: each bin is 2 x 2 pixels.
  absl::StatusOr<RenderedPng> png = RenderHistogram(*engine_, *store_, budget_, Spec(512, 128), 4096);
  ASSERT_TRUE(png.ok()) << png.status();
  EXPECT_EQ(png->view_rows, 64u);
  EXPECT_EQ(png->view_cols, 256u);
  EXPECT_EQ(png->z.zmax, 200);
  const Image image = DecodePng(png->png);
  ASSERT_EQ(image.width, 512u);
  ASSERT_EQ(image.height, 128u);
  EXPECT_EQ(image.at(200, 20), kViridis[128]);  // 100 of 200: round(127.5)
  EXPECT_EQ(image.at(201, 21), kViridis[128]);
  EXPECT_EQ(image.at(40, 80), kSaturatedRgb);
  EXPECT_EQ(image.at(42, 80), kViridis[13]);  // 10 of 200: round(12.75)
  EXPECT_EQ(image.at(300, 120), kViridis[0]);   // empty
  EXPECT_EQ(budget_.used(), 64u * 256u);        // the histogram alone: every render charge returned
}

TEST_F(RenderTest, SumPoolingAddsAndMarksBlocksHoldingASaturatedBin) {
  // 64 x 256 bins at 32 x 64 pixels: 2 x 4 blocks. The hot bin's block sums 100, the
  // saturated bin's block (bins 20, 21 of row 40: block col 5) is marked whatever its sum.
  RenderSpec spec = Spec(64, 32);
  spec.heatmap.zmax = 400;
  absl::StatusOr<RenderedPng> png = RenderHistogram(*engine_, *store_, budget_, spec, 4096);
  ASSERT_TRUE(png.ok()) << png.status();
  const Image image = DecodePng(png->png);
  EXPECT_EQ(image.at(25, 5), kViridis[64]);  // 100 of 400: round(63.75)
  EXPECT_EQ(image.at(5, 20), kSaturatedRgb);
  spec.pool = PoolOp::kMax;
  png = RenderHistogram(*engine_, *store_, budget_, spec, 4096);
  ASSERT_TRUE(png.ok()) << png.status();
  EXPECT_EQ(DecodePng(png->png).at(25, 5), kViridis[64]);
}

TEST_F(RenderTest, TheMaxReadRunsOnlyWhenSomeCellSumsToCap) {
  absl::StatusOr<std::shared_ptr<HistogramEntry>> entry = store_->Find("wafer");
  ASSERT_TRUE(entry.ok());
  ViewRequest request;
  request.rows = 8;
  request.cols = 8;
  request.mark_saturated = true;
  request.region = Region{0, 32, 0, 256};  // the hot bin (100 < cap 200) alone
  absl::StatusOr<PooledView> view = ReadPooledView(*engine_, budget_, **entry, request);
  ASSERT_TRUE(view.ok()) << view.status();
  EXPECT_TRUE(view->maxima.empty());
  EXPECT_EQ(ToHeatmapView(*view, (*entry)->spec()).saturated, std::vector<uint8_t>(64, 0));
  request.region = Region{32, 64, 0, 256};  // the saturated bin, and 10 beside it
  view = ReadPooledView(*engine_, budget_, **entry, request);
  ASSERT_TRUE(view.ok()) << view.status();
  ASSERT_EQ(view->maxima.size(), 64u);
  // Bins (40, 20) and (40, 21): cell (8 * 8 / 32, 20 * 8 / 256) = (2, 0), sum 210, max 200.
  EXPECT_EQ(view->value(2 * 8), 210u);
  EXPECT_EQ(view->maxima[2 * 8], 200u);
  const HeatmapView heatmap = ToHeatmapView(*view, (*entry)->spec());
  EXPECT_EQ(std::count(heatmap.saturated.begin(), heatmap.saturated.end(), 1), 1);
}

TEST_F(RenderTest, BadRequestsAreRefusedBeforeAnythingIsRead) {
  RenderSpec spec = Spec(0, 10);
  EXPECT_EQ(RenderHistogram(*engine_, *store_, budget_, spec, 4096).status().code(),
            absl::StatusCode::kInvalidArgument);
  spec = Spec(10, 10);
  spec.name = "nope";
  EXPECT_EQ(RenderHistogram(*engine_, *store_, budget_, spec, 4096).status().code(),
            absl::StatusCode::kNotFound);
  spec = Spec(10, 10);
  spec.region = Region{0, 65, 0, 10};
  EXPECT_EQ(RenderHistogram(*engine_, *store_, budget_, spec, 4096).status().code(),
            absl::StatusCode::kInvalidArgument);
  spec.region = Region{5, 5, 0, 10};
  EXPECT_EQ(RenderHistogram(*engine_, *store_, budget_, spec, 4096).status().code(),
            absl::StatusCode::kInvalidArgument);
  MemoryBudget tiny("host memory", "--max_memory_bytes", 1000);
  EXPECT_EQ(RenderHistogram(*engine_, *store_, tiny, Spec(64, 64), 4096).status().code(),
            absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace histd::server
