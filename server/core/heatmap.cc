#include "server/core/heatmap.h"

#include <algorithm>
#include <cmath>
#include <cstring>
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

  void Set(int64_t x, int64_t y, uint8_t index) {
    if (x < 0 || y < 0 || x >= image_.width || y >= image_.height) return;
    image_.pixels[uint64_t(y) * image_.width + uint64_t(x)] = index;
  }

  // Text with its top-left corner at (x, y), clipped to the image.
  void Text(int64_t x, int64_t y, const std::string& text) {
    for (char ch : text) {
      const uint8_t* rows = GlyphRows(ch);
      for (int gy = 0; gy < kGlyphHeight; ++gy) {
        for (int gx = 0; gx < kGlyphWidth; ++gx) {
          if (rows[gy] & (0x10 >> gx)) Set(x + gx, y + gy, kTextIndex);
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

// Colour table size: values below it get their level from a table computed once per image
// (a log scale would otherwise take a log10 per cell); never more entries than cells.
constexpr uint64_t kMaxTableValues = uint64_t{1} << 16;

uint64_t TableValues(uint64_t largest, uint64_t cells) {
  return std::min({largest + 1, cells, kMaxTableValues});
}

// Cell values of a view, by its dtype (kU8 maxima or kU32 sums, little-endian like the host).
template <typename T>
T CellValue(const PooledView& view, uint64_t cell) {
  T v;
  std::memcpy(&v, view.values.data() + cell * sizeof(T), sizeof(T));
  return v;
}

template <typename T>
uint64_t LargestValue(const PooledView& view) {
  T largest = 0;
  for (uint64_t i = 0, cells = view.rows * view.cols; i < cells; ++i) {
    largest = std::max(largest, CellValue<T>(view, i));
  }
  return largest;
}

uint64_t LargestValue(const PooledView& view) {
  return view.dtype == DType::kU8 ? LargestValue<uint8_t>(view) : LargestValue<uint32_t>(view);
}

struct PaletteTable {
  ZRange range;
  ColorScale scale;
  std::vector<uint8_t> table;  // palette index of each value below table.size()
  uint8_t index(uint64_t v) const {
    return v < table.size() ? table[v] : kLevelIndex[ValueLevel(double(v), range, scale)];
  }
};

// Palette indices of the cells of view row `row`, into out[0, view.cols).
template <typename T>
void IndexRow(const PooledView& view, uint64_t row, uint8_t cap, const PaletteTable& table,
              uint8_t* out) {
  const uint64_t first = row * view.cols;
  for (uint64_t c = 0; c < view.cols; ++c) out[c] = table.index(CellValue<T>(view, first + c));
  // A cell holds a bin at cap when its maximum does: the max read beside a sum when there
  // was one (none: no cell sums to cap), the value itself when max-pooled.
  if (!view.maxima.empty()) {
    const uint8_t* maxima = view.maxima.data() + first;
    for (uint64_t c = 0; c < view.cols; ++c) {
      if (maxima[c] >= cap) out[c] = kSaturatedIndex;
    }
  } else if (view.pool == PoolOp::kMax) {
    for (uint64_t c = 0; c < view.cols; ++c) {
      if (CellValue<T>(view, first + c) >= cap) out[c] = kSaturatedIndex;
    }
  }
}

}  // namespace

HeatmapFrame FrameFor(const HeatmapOptions& options) {
  if (!options.frame) return HeatmapFrame{};
  return HeatmapFrame{kLeftMargin, kTopMargin, kRightMargin, kBottomMargin};
}

uint64_t HeatmapImageBytes(const HeatmapOptions& options) {
  const HeatmapFrame f = FrameFor(options);
  return (uint64_t{options.width} + f.left + f.right) *
         (uint64_t{options.height} + f.top + f.bottom);
}

uint64_t HeatmapDrawBytes(const HeatmapOptions& options) {
  const uint64_t pixels = uint64_t{options.width} * options.height;
  return HeatmapImageBytes(options) + TableValues(pixels, pixels) + uint64_t{options.width} * 5;
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

namespace {

ZRange ZRangeUpTo(uint64_t largest, const HeatmapOptions& options) {
  ZRange range;
  range.zmin = options.zmin.value_or(options.scale == ColorScale::kLog ? 1.0 : 0.0);
  range.zmax = options.zmax ? *options.zmax : std::max(range.zmin, double(largest));
  return range;
}

}  // namespace

ZRange ResolveZRange(const PooledView& view, const HeatmapOptions& options) {
  return ZRangeUpTo(LargestValue(view), options);
}

uint8_t ValueLevel(double v, const ZRange& range, ColorScale scale) {
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
  return static_cast<uint8_t>(std::lround(255.0 * t));
}

Image DrawHeatmap(const PooledView& view, const HistogramSpec& histogram,
                  const HeatmapOptions& options, ZRange* used) {
  const HeatmapFrame f = FrameFor(options);
  Image image;
  image.width = options.width + f.left + f.right;
  image.height = options.height + f.top + f.bottom;
  image.pixels.assign(uint64_t{image.width} * image.height, kBackgroundIndex);
  image.cells_repeat = view.rows < options.height || view.cols < options.width;
  const uint64_t largest = LargestValue(view);
  const ZRange range = ZRangeUpTo(largest, options);
  if (used != nullptr) *used = range;

  PaletteTable table{range, options.scale, {}};
  table.table.resize(TableValues(largest, view.rows * view.cols));
  for (size_t v = 0; v < table.table.size(); ++v) {
    table.table[v] = kLevelIndex[ValueLevel(double(v), range, options.scale)];
  }
  auto index_row = view.dtype == DType::kU8 ? IndexRow<uint8_t> : IndexRow<uint32_t>;
  // The heatmap, row by row: a view row's indices are computed once, straight into the
  // image when the view has a cell per pixel column, else into `cells` and spread over the
  // pixels; pixel rows showing the same view row are copies.
  const bool cell_per_column = view.cols == options.width;
  std::vector<uint8_t> cells(cell_per_column ? 0 : view.cols);
  std::vector<uint32_t> cell_col(cell_per_column ? 0 : options.width);
  for (uint32_t px = 0; px < cell_col.size(); ++px) {
    cell_col[px] = uint32_t(uint64_t{px} * view.cols / options.width);
  }
  const uint8_t* previous = nullptr;
  uint64_t previous_row = 0;
  for (uint32_t py = 0; py < options.height; ++py) {
    const uint64_t row = uint64_t{py} * view.rows / options.height;
    uint8_t* out = image.pixels.data() + uint64_t{py + f.top} * image.width + f.left;
    if (previous != nullptr && row == previous_row) {
      std::memcpy(out, previous, options.width);
    } else if (cell_per_column) {
      index_row(view, row, histogram.shape.cap, table, out);
    } else {
      index_row(view, row, histogram.shape.cap, table, cells.data());
      for (uint32_t px = 0; px < options.width; ++px) out[px] = cells[cell_col[px]];
    }
    previous = out;
    previous_row = row;
  }
  if (!options.frame) return image;

  Canvas canvas(image);
  const int64_t left = f.left, top = f.top;
  const int64_t right = f.left + options.width, bottom = f.top + options.height;
  for (int k = 0; k < kTicks; ++k) {
    // Columns along the bottom, labels centred under their ticks and kept inside the image.
    const uint32_t ex = uint32_t(uint64_t{options.width} * k / (kTicks - 1));
    const int64_t x = std::min<int64_t>(left + ex, right - 1);
    for (uint32_t d = 1; d <= kTickLength; ++d) canvas.Set(x, bottom + d - 1, kTextIndex);
    const std::string col_label =
        Label(EdgePosition(ex, options.width, view.region.col_begin, view.region.cols(),
                           histogram.shape.cols, histogram.x_axis));
    const int64_t tx = std::clamp<int64_t>(x - TextWidth(col_label) / 2, 0,
                                           int64_t(image.width) - TextWidth(col_label));
    canvas.Text(tx, bottom + kTickLength + 2, col_label);
    // Rows along the left, labels right-aligned before their ticks.
    const uint32_t ey = uint32_t(uint64_t{options.height} * k / (kTicks - 1));
    const int64_t y = std::min<int64_t>(top + ey, bottom - 1);
    for (uint32_t d = 1; d <= kTickLength; ++d) canvas.Set(left - d, y, kTextIndex);
    const std::string row_label =
        Label(EdgePosition(ey, options.height, view.region.row_begin, view.region.rows(),
                           histogram.shape.rows, histogram.y_axis));
    const int64_t ty = std::clamp<int64_t>(y - kGlyphHeight / 2, 0,
                                           int64_t(image.height) - kGlyphHeight);
    canvas.Text(left - kTickLength - 2 - TextWidth(row_label), ty, row_label);
  }

  // The colour bar: zmax at the top, zmin at the bottom, the saturated swatch above it.
  const int64_t bar_left = right + kBarGap, bar_right = bar_left + kBarWidth;
  for (int64_t y = top; y < bottom; ++y) {
    const double t = options.height == 1 ? 1.0 : double(bottom - 1 - y) / double(options.height - 1);
    const uint8_t index = kLevelIndex[static_cast<size_t>(std::lround(255.0 * t))];
    for (int64_t x = bar_left; x < bar_right; ++x) canvas.Set(x, y, index);
  }
  for (int64_t y = top - 14; y < top - 4; ++y) {
    for (int64_t x = bar_left; x < bar_right; ++x) canvas.Set(x, y, kSaturatedIndex);
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
