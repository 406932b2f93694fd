// Draws a pooled view of a histogram (server/core/pooled_view.h) as an RGB heatmap: one colour
// per pixel from the viridis colormap (server/core/viridis.h), saturated cells in kSaturatedRgb,
// and, unless `frame` is off, tick labels around it and a colour bar to its right.
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
// zmax to the view's largest value (at least zmin). When zmax <= zmin, t is 1 above zmin and
// 0 otherwise. A cell holding a bin at the histogram's cap is kSaturatedRgb, a colour
// viridis does not contain, whatever the scale.
//
// Frame. Margins of fixed size (HeatmapFrame) hold five tick labels per axis: positions in
// axis units when the histogram has that axis (x over columns, y over rows), else bin
// positions; the colour bar is labelled zmin (bottom), the middle (linear: the mean, log:
// the geometric mean) and zmax (top), with a kSaturatedRgb swatch above it labelled "sat".
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "server/core/viridis.h"

namespace histd::server {

inline constexpr Rgb kSaturatedRgb{255, 0, 0};
inline constexpr Rgb kBackgroundRgb{255, 255, 255};
inline constexpr Rgb kTextRgb{0, 0, 0};

enum class ColorScale : uint8_t { kLinear, kLog };

struct HeatmapOptions {
  uint32_t width = 0;   // heatmap pixels, >= 1
  uint32_t height = 0;  // >= 1
  ColorScale scale = ColorScale::kLinear;
  std::optional<double> zmin, zmax;  // finite; zmin > 0 for log; zmin < zmax when both set
  bool frame = true;                 // labels and colour bar around the heatmap
};

// What the view shows and how its cells were pooled.
struct HeatmapView {
  uint64_t rows = 0, cols = 0;       // >= 1 each
  std::vector<uint64_t> values;      // rows * cols, row-major
  std::vector<uint8_t> saturated;    // rows * cols, 1 where the cell holds a bin at cap
  Region region;                     // of the histogram, for the labels
  HistogramShape shape;
  std::optional<AxisRange> x_axis, y_axis;
};

// Margins around the heatmap when framed (0 when not).
struct HeatmapFrame {
  uint32_t left = 0, top = 0, right = 0, bottom = 0;
};
HeatmapFrame FrameFor(const HeatmapOptions& options);

struct Image {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> rgb;  // width * height * 3, row-major
  Rgb at(uint32_t x, uint32_t y) const {
    const uint8_t* p = rgb.data() + (uint64_t{y} * width + x) * 3;
    return Rgb{p[0], p[1], p[2]};
  }
};

// Bytes DrawHeatmap allocates for `options` (the image), for budgets; sizes must be checked
// (CheckHeatmapOptions) first.
uint64_t HeatmapImageBytes(const HeatmapOptions& options);

// INVALID_ARGUMENT naming the field: zero or oversized pixels, non-finite or inverted
// zmin/zmax, zmin <= 0 on a log scale. `max_side` bounds width and height.
absl::Status CheckHeatmapOptions(const HeatmapOptions& options, uint32_t max_side);

// The z range used for `view` (defaults filled in as described above).
struct ZRange {
  double zmin = 0, zmax = 0;
};
ZRange ResolveZRange(const HeatmapView& view, const HeatmapOptions& options);

// The colour of value v under `range` and `scale` (not saturated).
Rgb ValueColor(double v, const ZRange& range, ColorScale scale);

// The image (options checked by the caller); `used`, when not null, receives the z range.
Image DrawHeatmap(const HeatmapView& view, const HeatmapOptions& options, ZRange* used);

}  // namespace histd::server
