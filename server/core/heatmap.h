// Draws a pooled view of a histogram (server/core/pooled_view.h) as an 8-bit palette image:
// one index into kPalette (the viridis colormap, the saturated and background colours) per
// pixel, and, unless `frame` is off, tick labels around it and a colour bar to its right.
// server/core/png_encode.h writes it as a palette PNG.
//
// Pixels. The heatmap is exactly width x height pixels, row 0 of the region at the top and
// column 0 at the left (the array's orientation). Pixel (px, py) shows view cell
// (floor(py * view.rows / height), floor(px * view.cols / width)): one pixel per cell when
// the view has the pixel size, nearest-neighbour blocks when the region has fewer bins.
//
// Colours. A cell's value v (a block's sum or maximum) maps to t in [0, 1]:
//   linear  t = (v - zmin) / (zmax - zmin)
//   log     t = (log10 v - log10 zmin) / (log10 zmax - log10 zmin); v <= 0 gives t = 0
// clamped to [0, 1], then viridis[round(255 t)]. zmin defaults to 0 (linear) or 1 (log),
// zmax to the view's largest value (at least zmin). When zmax <= zmin, t is 1 above zmin
// and 0 otherwise. A cell holding a bin at the histogram's cap is kSaturatedRgb, a colour
// viridis does not contain, whatever the scale.
//
// Frame. Margins of fixed size (HeatmapFrame) on kBackgroundRgb hold five tick labels per
// axis in kTextRgb: positions in axis units when the histogram has that axis (x over
// columns, y over rows), else bin positions; the colour bar is labelled zmin (bottom), the
// middle (linear: the mean, log: the geometric mean) and zmax (top), with a kSaturatedRgb
// swatch above it labelled "sat".
//
// Thread safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "server/core/histogram_store.h"
#include "server/core/pooled_view.h"
#include "server/core/viridis.h"

namespace histd::server {

// The palette of heatmap images: the distinct colours of kViridis in order (8-bit viridis
// repeats two of its 256 entries: 254 colours), then the saturated and background colours.
// kLevelIndex maps a colormap level (a kViridis index) to its palette index. Labels are
// drawn in viridis' darkest colour: a PNG palette holds at most 256 colours.
constexpr std::array<uint8_t, 256> MakeLevelIndex() {
  std::array<uint8_t, 256> index{};
  for (size_t i = 1; i < index.size(); ++i) {
    const Rgb &a = kViridis[i - 1], &b = kViridis[i];
    index[i] = index[i - 1] + (a.r != b.r || a.g != b.g || a.b != b.b ? 1 : 0);
  }
  return index;
}
inline constexpr std::array<uint8_t, 256> kLevelIndex = MakeLevelIndex();
inline constexpr int kPaletteSize = kLevelIndex[255] + 1 + 2;
static_assert(kPaletteSize <= 256, "viridis' colours, saturated and background fit a PNG palette");
inline constexpr uint8_t kSaturatedIndex = kLevelIndex[255] + 1;
inline constexpr uint8_t kBackgroundIndex = kLevelIndex[255] + 2;
inline constexpr uint8_t kTextIndex = kLevelIndex[0];

constexpr std::array<Rgb, 256> MakePalette() {
  std::array<Rgb, 256> palette{};
  for (size_t i = 0; i < kViridis.size(); ++i) palette[kLevelIndex[i]] = kViridis[i];
  palette[kSaturatedIndex] = Rgb{255, 0, 0};
  palette[kBackgroundIndex] = Rgb{255, 255, 255};
  return palette;
}
inline constexpr std::array<Rgb, 256> kPalette = MakePalette();  // kPaletteSize used
inline constexpr Rgb kSaturatedRgb = kPalette[kSaturatedIndex];
inline constexpr Rgb kBackgroundRgb = kPalette[kBackgroundIndex];
inline constexpr Rgb kTextRgb = kPalette[kTextIndex];

enum class ColorScale : uint8_t { kLinear, kLog };

struct HeatmapOptions {
  uint32_t width = 0;   // heatmap pixels, >= 1
  uint32_t height = 0;  // >= 1
  ColorScale scale = ColorScale::kLinear;
  std::optional<double> zmin, zmax;  // finite; zmin > 0 for log; zmin < zmax when both set
  bool frame = true;                 // labels and colour bar around the heatmap
};

// Margins around the heatmap when framed (0 when not).
struct HeatmapFrame {
  uint32_t left = 0, top = 0, right = 0, bottom = 0;
};
HeatmapFrame FrameFor(const HeatmapOptions& options);

struct Image {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> pixels;  // width * height indices into kPalette, row-major
  // Some cell of the view spans several pixels (zoomed in): runs in the rows, rows repeated.
  bool cells_repeat = false;
  Rgb at(uint32_t x, uint32_t y) const { return kPalette[pixels[uint64_t{y} * width + x]]; }
};

// Bytes of DrawHeatmap's image for `options`, and of everything it allocates (the image, a
// colour table of at most 64 Ki values and one row of cells), for budgets; sizes must be
// checked (CheckHeatmapOptions) first.
uint64_t HeatmapImageBytes(const HeatmapOptions& options);
uint64_t HeatmapDrawBytes(const HeatmapOptions& options);

// INVALID_ARGUMENT naming the field: zero or oversized pixels, non-finite or inverted
// zmin/zmax, zmin <= 0 on a log scale. `max_side` bounds width and height.
absl::Status CheckHeatmapOptions(const HeatmapOptions& options, uint32_t max_side);

// The z range used for `view` (defaults filled in as described above).
struct ZRange {
  double zmin = 0, zmax = 0;
};
ZRange ResolveZRange(const PooledView& view, const HeatmapOptions& options);

// The colormap level (the kViridis index; kLevelIndex gives its palette index) of value v
// under `range` and `scale` (not saturated).
uint8_t ValueLevel(double v, const ZRange& range, ColorScale scale);

// The image of `view`, a pooled view of the histogram `histogram` (its cap marks saturated
// cells, its axes label the frame); options checked by the caller. `used`, when not null,
// receives the z range.
Image DrawHeatmap(const PooledView& view, const HistogramSpec& histogram,
                  const HeatmapOptions& options, ZRange* used);

}  // namespace histd::server
