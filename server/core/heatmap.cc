#include "server/core/heatmap.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_format.h"
#include "server/core/bitmap_font.h"

namespace histd::server {
namespace {

// Frame geometry: labels are at most 10 glyphs ("-1.235e+05", 59 pixels).
constexpr uint32_t kLeftMargin = 66;    // row labels, right-aligned, and their ticks
constexpr uint32_t kTopMargin = 20;     // the "sat" swatch above the colour bar
constexpr uint32_t kBottomMargin = 18;  // ticks and column labels
constexpr uint32_t kBarGap = 8, kBarWidth = 14, kBarLabelGap = 4;
constexpr uint32_t kRightMargin = kBarGap + kBarWidth + kBarLabelGap + 62;
constexpr uint32_t kTickLength = 3;
constexpr int kTicks = 5;

class Canvas {
 public:
  explicit Canvas(Image& image) : image_(image) {}

  void Set(int64_t x, int64_t y, Rgb c) {
    if (x < 0 || y < 0 || x >= image_.width || y >= image_.height) return;
    uint8_t* p = image_.rgb.data() + (uint64_t(y) * image_.width + uint64_t(x)) * 3;
    p[0] = c.r;
    p[1] = c.g;
    p[2] = c.b;
  }

  // Text with its top-left corner at (x, y), clipped to the image.
  void Text(int64_t x, int64_t y, const std::string& text) {
    for (char ch : text) {
      const uint8_t* rows = GlyphRows(ch);
      for (int gy = 0; gy < kGlyphHeight; ++gy) {
        for (int gx = 0; gx < kGlyphWidth; ++gx) {
          if (rows[gy] & (0x10 >> gx)) Set(x + gx, y + gy, kTextRgb);
        }
      }
      x += kGlyphAdvance;
    }
  }

 private:
  Image& image_;
};

std::string Label(double v) {
  if (v == 0) return "0";  // not "-0"
  return absl::StrFormat("%.4g", v);
}

// Position of the pixel edge `edge` (0..pixels) in bins of the histogram, then in axis units
// when there is an axis.
double EdgePosition(uint32_t edge, uint32_t pixels, uint32_t begin, uint32_t extent,
                    uint32_t bins, const std::optional<AxisRange>& axis) {
  const double bin = begin + double(edge) * extent / pixels;
  if (!axis) return bin;
  return axis->lo + bin * (double(axis->hi) - double(axis->lo)) / bins;
}

}  // namespace

HeatmapFrame FrameFor(const HeatmapOptions& options) {
  if (!options.frame) return HeatmapFrame{};
  return HeatmapFrame{kLeftMargin, kTopMargin, kRightMargin, kBottomMargin};
}

uint64_t HeatmapImageBytes(const HeatmapOptions& options) {
  const HeatmapFrame f = FrameFor(options);
  return (uint64_t{options.width} + f.left + f.right) * (uint64_t{options.height} + f.top + f.bottom) *
         3;
}

absl::Status CheckHeatmapOptions(const HeatmapOptions& options, uint32_t max_side) {
  if (options.width < 1 || options.width > max_side || options.height < 1 ||
      options.height > max_side) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "width and height must be in 1..%u pixels, got %u x %u", max_side, options.width,
        options.height));
  }
  for (const auto& [name, z] : {std::pair{"zmin", options.zmin}, std::pair{"zmax", options.zmax}}) {
    if (z && !std::isfinite(*z)) {
      return absl::InvalidArgumentError(absl::StrFormat("%s must be finite, got %g", name, *z));
    }
  }
  if (options.zmin && options.zmax && !(*options.zmin < *options.zmax)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "zmin %g must be below zmax %g", *options.zmin, *options.zmax));
  }
  if (options.scale == ColorScale::kLog) {
    if (options.zmin && !(*options.zmin > 0)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("a log scale needs zmin > 0, got %g", *options.zmin));
    }
    if (options.zmax && !(*options.zmax > 0)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("a log scale needs zmax > 0, got %g", *options.zmax));
    }
  }
  return absl::OkStatus();
}

ZRange ResolveZRange(const HeatmapView& view, const HeatmapOptions& options) {
  ZRange range;
  range.zmin = options.zmin.value_or(options.scale == ColorScale::kLog ? 1.0 : 0.0);
  if (options.zmax) {
    range.zmax = *options.zmax;
  } else {
    uint64_t largest = 0;
    for (uint64_t v : view.values) largest = std::max(largest, v);
    range.zmax = std::max(range.zmin, double(largest));
  }
  return range;
}

Rgb ValueColor(double v, const ZRange& range, ColorScale scale) {
  double t;
  if (!(range.zmax > range.zmin)) {
    t = v > range.zmin ? 1.0 : 0.0;
  } else if (scale == ColorScale::kLog) {
    t = v <= 0 ? 0.0
               : (std::log10(v) - std::log10(range.zmin)) /
                     (std::log10(range.zmax) - std::log10(range.zmin));
  } else {
    t = (v - range.zmin) / (range.zmax - range.zmin);
  }
  t = std::clamp(t, 0.0, 1.0);
  return kViridis[static_cast<size_t>(std::lround(255.0 * t))];
}

Image DrawHeatmap(const HeatmapView& view, const HeatmapOptions& options, ZRange* used) {
  const HeatmapFrame f = FrameFor(options);
  Image image;
  image.width = options.width + f.left + f.right;
  image.height = options.height + f.top + f.bottom;
  image.rgb.assign(uint64_t{image.width} * image.height * 3, 255);  // kBackgroundRgb
  const ZRange range = ResolveZRange(view, options);
  if (used != nullptr) *used = range;

  // Colours of the values up to 65535 (all of them in most views) computed once: a log
  // scale would otherwise take a log10 per pixel.
  uint64_t largest = 0;
  for (uint64_t v : view.values) largest = std::max(largest, v);
  std::vector<Rgb> colors(std::min<uint64_t>(largest + 1, uint64_t{1} << 16));
  for (size_t v = 0; v < colors.size(); ++v) colors[v] = ValueColor(double(v), range, options.scale);
  // The heatmap: columns of pixels map to view columns once, then row by row.
  std::vector<uint64_t> cell_col(options.width);
  for (uint32_t px = 0; px < options.width; ++px) cell_col[px] = uint64_t{px} * view.cols / options.width;
  for (uint32_t py = 0; py < options.height; ++py) {
    const uint64_t row = uint64_t{py} * view.rows / options.height;
    uint8_t* out = image.rgb.data() + (uint64_t{py + f.top} * image.width + f.left) * 3;
    for (uint32_t px = 0; px < options.width; ++px, out += 3) {
      const uint64_t cell = row * view.cols + cell_col[px];
      const uint64_t v = view.values[cell];
      const Rgb c = view.saturated[cell] ? kSaturatedRgb
                    : v < colors.size()  ? colors[v]
                                         : ValueColor(double(v), range, options.scale);
      out[0] = c.r;
      out[1] = c.g;
      out[2] = c.b;
    }
  }
  if (!options.frame) return image;

  Canvas canvas(image);
  const int64_t left = f.left, top = f.top;
  const int64_t right = f.left + options.width, bottom = f.top + options.height;
  for (int k = 0; k < kTicks; ++k) {
    // Columns along the bottom, labels centred under their ticks and kept inside the image.
    const uint32_t ex = uint32_t(uint64_t{options.width} * k / (kTicks - 1));
    const int64_t x = std::min<int64_t>(left + ex, right - 1);
    for (uint32_t d = 1; d <= kTickLength; ++d) canvas.Set(x, bottom + d - 1, kTextRgb);
    const std::string col_label =
        Label(EdgePosition(ex, options.width, view.region.col_begin, view.region.cols(),
                           view.shape.cols, view.x_axis));
    const int64_t tx = std::clamp<int64_t>(x - TextWidth(col_label) / 2, 0,
                                           int64_t(image.width) - TextWidth(col_label));
    canvas.Text(tx, bottom + kTickLength + 2, col_label);
    // Rows along the left, labels right-aligned before their ticks.
    const uint32_t ey = uint32_t(uint64_t{options.height} * k / (kTicks - 1));
    const int64_t y = std::min<int64_t>(top + ey, bottom - 1);
    for (uint32_t d = 1; d <= kTickLength; ++d) canvas.Set(left - d, y, kTextRgb);
    const std::string row_label =
        Label(EdgePosition(ey, options.height, view.region.row_begin, view.region.rows(),
                           view.shape.rows, view.y_axis));
    const int64_t ty = std::clamp<int64_t>(y - kGlyphHeight / 2, 0,
                                           int64_t(image.height) - kGlyphHeight);
    canvas.Text(left - kTickLength - 2 - TextWidth(row_label), ty, row_label);
  }

  // The colour bar: zmax at the top, zmin at the bottom, the saturated swatch above it.
  const int64_t bar_left = right + kBarGap, bar_right = bar_left + kBarWidth;
  for (int64_t y = top; y < bottom; ++y) {
    const double t = options.height == 1 ? 1.0 : double(bottom - 1 - y) / double(options.height - 1);
    const Rgb c = kViridis[static_cast<size_t>(std::lround(255.0 * t))];
    for (int64_t x = bar_left; x < bar_right; ++x) canvas.Set(x, y, c);
  }
  for (int64_t y = top - 14; y < top - 4; ++y) {
    for (int64_t x = bar_left; x < bar_right; ++x) canvas.Set(x, y, kSaturatedRgb);
  }
  const int64_t label_x = bar_right + kBarLabelGap;
  canvas.Text(label_x, top - 13, "sat");
  const double middle = options.scale == ColorScale::kLog && range.zmin > 0
                            ? std::sqrt(range.zmin * range.zmax)
                            : (range.zmin + range.zmax) / 2;
  canvas.Text(label_x, top, Label(range.zmax));
  canvas.Text(label_x, std::max<int64_t>(top, (top + bottom) / 2 - kGlyphHeight / 2), Label(middle));
  canvas.Text(label_x, std::max<int64_t>(top, bottom - kGlyphHeight), Label(range.zmin));
  return image;
}

}  // namespace histd::server
