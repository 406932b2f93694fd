// server/core/heatmap.h, server/core/png_encode.h and server/core/render.h without gRPC: the
// palette, colormap levels of values under linear and log scales and zmin/zmax, saturated
// cells, pixel-to-cell mapping, the frame's size, option checks, and a whole render on the
// CPU engine decoded back with libpng's simplified reader (an independent decoder checks the
// same in client/python/tests/test_render.py).
#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
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

// A summed view of rows x cols cells; `saturated` cells get a maximum at cap (255).
PooledView View(uint64_t rows, uint64_t cols, const std::vector<uint32_t>& values,
                const std::vector<uint8_t>& saturated = {}) {
  PooledView view;
  view.rows = rows;
  view.cols = cols;
  view.region = Region{0, uint32_t(rows), 0, uint32_t(cols)};
  view.values.resize(values.size() * 4);
  std::memcpy(view.values.data(), values.data(), view.values.size());
  for (uint8_t s : saturated) view.maxima.push_back(s ? 255 : 0);
  return view;
}

HistogramSpec SpecOf(const PooledView& view) {
  HistogramSpec spec;
  spec.name = "h";
  spec.shape = HistogramShape{uint32_t(view.rows), uint32_t(view.cols), 255};
  return spec;
}

// The colour of value v under `range` and `scale`.
Rgb ValueColor(double v, const ZRange& range, ColorScale scale) {
  return kViridis[ValueLevel(v, range, scale)];
}

HeatmapOptions Bare(uint32_t width, uint32_t height) {
  HeatmapOptions options;
  options.width = width;
  options.height = height;
  options.frame = false;
  return options;
}

TEST(HeatmapTest, ThePaletteHoldsEveryViridisColourThenRedAndWhite) {
  for (size_t i = 0; i < kViridis.size(); ++i) {
    EXPECT_EQ(kPalette[kLevelIndex[i]], kViridis[i]) << i;
  }
  // 8-bit viridis repeats entries 112/113 and 129/130: 254 colours, then red and white.
  EXPECT_EQ(kLevelIndex[113], kLevelIndex[112]);
  EXPECT_EQ(kLevelIndex[255], 253);
  EXPECT_EQ(kPaletteSize, 256);
  EXPECT_EQ(kSaturatedRgb, (Rgb{255, 0, 0}));
  EXPECT_EQ(kBackgroundRgb, (Rgb{255, 255, 255}));
  EXPECT_EQ(kTextRgb, kViridis[0]);
  // Every entry distinct: no colormap level reads as saturated or background.
  for (int i = 0; i < kPaletteSize; ++i)
    for (int j = i + 1; j < kPaletteSize; ++j) EXPECT_NE(kPalette[i], kPalette[j]) << i << " " << j;
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
  const PooledView view = View(1, 3, {0, 7, 40});
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
  const std::vector<uint32_t> values = {0, 50, 100, 25, 255, 75};
  const std::vector<uint8_t> saturated = {0, 0, 0, 0, 1, 0};
  const PooledView view = View(2, 3, values, saturated);
  ZRange used;
  const Image image = DrawHeatmap(view, SpecOf(view), Bare(6, 4), &used);
  ASSERT_EQ(image.width, 6u);
  ASSERT_EQ(image.height, 4u);
  EXPECT_EQ(used.zmax, 255);
  for (uint32_t y = 0; y < 4; ++y) {
    for (uint32_t x = 0; x < 6; ++x) {
      const uint64_t cell = (y / 2) * 3 + x / 2;
      const Rgb expected = saturated[cell] ? kSaturatedRgb
                                           : ValueColor(double(values[cell]), used,
                                                        ColorScale::kLinear);
      EXPECT_EQ(image.at(x, y), expected) << x << ", " << y;
    }
  }
  EXPECT_EQ(image.at(2, 2), kSaturatedRgb);
  EXPECT_EQ(image.at(0, 0), kViridis[0]);
  EXPECT_TRUE(image.cells_repeat);
  EXPECT_FALSE(DrawHeatmap(view, SpecOf(view), Bare(3, 2), nullptr).cells_repeat);
  EXPECT_EQ(image.at(4, 0), kViridis[100]);  // 100 of 255
}

TEST(HeatmapTest, UnevenBlocksLargeSumsAndMaxPooledViews) {
  // 2 x 3 and 2 x 7 cells on 7 x 5 pixels (uneven blocks; a cell per pixel column), values
  // beyond the colour table (sums above 65535); then a max-pooled view, whose own values
  // mark saturated cells.
  const std::vector<uint32_t> values = {0, 70000, 140000, 35000, 1, 139999, 7,
                                        8, 9,     10,     11,    12, 13, 14};
  for (const uint64_t cols : {3u, 7u}) {
    const PooledView view =
        View(2, cols, std::vector<uint32_t>(values.begin(), values.begin() + 2 * cols));
    ZRange used;
    const Image image = DrawHeatmap(view, SpecOf(view), Bare(7, 5), &used);
    EXPECT_EQ(used.zmax, 140000);
    for (uint32_t y = 0; y < 5; ++y) {
      for (uint32_t x = 0; x < 7; ++x) {
        const uint64_t cell = (y * 2 / 5) * cols + x * cols / 7;
        EXPECT_EQ(image.at(x, y), ValueColor(double(values[cell]), used, ColorScale::kLinear))
            << cols << ": " << x << ", " << y;
      }
    }
  }
  EXPECT_EQ(ValueColor(139999, ZRange{0, 140000}, ColorScale::kLinear), kViridis[255]);
  PooledView maxima;
  maxima.rows = 1;
  maxima.cols = 3;
  maxima.pool = PoolOp::kMax;
  maxima.dtype = DType::kU8;
  maxima.values = {0, 255, 100};
  ZRange used;
  const Image peaks = DrawHeatmap(maxima, SpecOf(maxima), Bare(3, 1), &used);
  EXPECT_EQ(used.zmax, 255);
  EXPECT_EQ(peaks.at(0, 0), kViridis[0]);
  EXPECT_EQ(peaks.at(1, 0), kSaturatedRgb);
  EXPECT_EQ(peaks.at(2, 0), kViridis[100]);
}

TEST(HeatmapTest, FrameSurroundsTheHeatmapWithLabelsAndAColourBar) {
  const PooledView view = View(4, 8, std::vector<uint32_t>(32, 3));
  HeatmapOptions options = Bare(80, 40);
  options.frame = true;
  const HeatmapFrame f = FrameFor(options);
  const Image image = DrawHeatmap(view, SpecOf(view), options, nullptr);
  EXPECT_EQ(image.width, 80 + f.left + f.right);
  EXPECT_EQ(image.height, 40 + f.top + f.bottom);
  EXPECT_EQ(HeatmapImageBytes(options), uint64_t{image.width} * image.height);
  EXPECT_GT(HeatmapDrawBytes(options), HeatmapImageBytes(options));
  EXPECT_EQ(image.at(0, 0), kBackgroundRgb);
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

struct RgbImage {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> rgb;  // width * height * 3, row-major
  Rgb at(uint32_t x, uint32_t y) const {
    const uint8_t* p = rgb.data() + (uint64_t{y} * width + x) * 3;
    return Rgb{p[0], p[1], p[2]};
  }
};

// libpng's simplified reader: RGB pixels and the size.
RgbImage DecodePng(const std::string& png) {
  png_image decoded{};
  decoded.version = PNG_IMAGE_VERSION;
  RgbImage image;
  if (!png_image_begin_read_from_memory(&decoded, png.data(), png.size())) return image;
  decoded.format = PNG_FORMAT_RGB;
  image.width = decoded.width;
  image.height = decoded.height;
  image.rgb.resize(PNG_IMAGE_SIZE(decoded));
  if (!png_image_finish_read(&decoded, nullptr, image.rgb.data(), 0, nullptr)) return RgbImage{};
  return image;
}

// RGB pixels of an image through the palette.
std::vector<uint8_t> RgbOf(const Image& image) {
  std::vector<uint8_t> rgb;
  for (uint8_t index : image.pixels) {
    rgb.insert(rgb.end(), {kPalette[index].r, kPalette[index].g, kPalette[index].b});
  }
  return rgb;
}

TEST(PngTest, EncodesEveryPixelLosslessly) {
  // Random indices (no runs), then runs and repeated rows (what the filter and zlib's
  // run-length strategy act on), every palette entry used.
  std::mt19937 rng(3);
  for (const bool runs : {false, true}) {
    Image image;
    image.width = 37;
    image.height = 11;
    image.pixels.resize(37 * 11);
    for (uint8_t& b : image.pixels) b = uint8_t(rng() % kPaletteSize);
    image.cells_repeat = runs;  // the other encoder settings
    if (runs) {
      for (uint32_t y = 0; y < image.height; ++y) {
        for (uint32_t x = 0; x < image.width; ++x) {
          image.pixels[y * 37 + x] = uint8_t((y / 2 * 40 + x / 4) % kPaletteSize);
        }
      }
    }
    absl::StatusOr<std::string> png = EncodePng(image);
    ASSERT_TRUE(png.ok()) << png.status();
    EXPECT_EQ(png->substr(1, 3), "PNG");
    EXPECT_LE(png->size(), PngBytesBound(37, 11));
    const RgbImage back = DecodePng(*png);
    EXPECT_EQ(back.width, 37u);
    EXPECT_EQ(back.height, 11u);
    EXPECT_EQ(back.rgb, RgbOf(image)) << "runs " << runs;
  }
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
  const RgbImage image = DecodePng(png->png);
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
  const RgbImage image = DecodePng(png->png);
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
  HeatmapOptions options = Bare(8, 8);
  options.zmax = 1000;
  Image image = DrawHeatmap(*view, (*entry)->spec(), options, nullptr);
  EXPECT_EQ(std::count(image.pixels.begin(), image.pixels.end(), kSaturatedIndex), 0);
  request.region = Region{32, 64, 0, 256};  // the saturated bin, and 10 beside it
  view = ReadPooledView(*engine_, budget_, **entry, request);
  ASSERT_TRUE(view.ok()) << view.status();
  ASSERT_EQ(view->maxima.size(), 64u);
  // Bins (40, 20) and (40, 21): cell (8 * 8 / 32, 20 * 8 / 256) = (2, 0), sum 210, max 200.
  EXPECT_EQ(view->value(2 * 8), 210u);
  EXPECT_EQ(view->maxima[2 * 8], 200u);
  image = DrawHeatmap(*view, (*entry)->spec(), options, nullptr);
  EXPECT_EQ(std::count(image.pixels.begin(), image.pixels.end(), kSaturatedIndex), 1);
  EXPECT_EQ(image.pixels[2 * 8], kSaturatedIndex);
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
