#include "server/core/pooled_view.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_format.h"

namespace histd::server {

uint64_t PooledView::value(uint64_t cell) const {
  if (dtype == DType::kU8) return values[cell];
  uint32_t v;
  std::memcpy(&v, values.data() + cell * 4, 4);
  return v;
}

namespace {

// Whether some cell of `view` is at least `threshold`: one pass without early exit, which
// the compiler vectorizes.
template <typename T>
bool AnyCellAtLeast(const PooledView& view, uint32_t threshold) {
  bool any = false;
  for (uint64_t i = 0, cells = view.rows * view.cols; i < cells; ++i) {
    T v;
    std::memcpy(&v, view.values.data() + i * sizeof(T), sizeof(T));
    any |= v >= threshold;
  }
  return any;
}

}  // namespace

Region ResolveRegion(const Region& region, const HistogramShape& shape) {
  if (region.row_begin == 0 && region.row_end == 0 && region.col_begin == 0 &&
      region.col_end == 0) {
    return Region{0, shape.rows, 0, shape.cols};
  }
  return region;
}

absl::StatusOr<PooledView> ReadPooledView(Engine& engine, MemoryBudget& budget,
                                          const HistogramEntry& entry, const ViewRequest& request) {
  const HistogramShape& shape = entry.spec().shape;
  if (request.rows < 1 || request.cols < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "a view needs at least 1 x 1 cells, got %u x %u", request.rows, request.cols));
  }
  ReadSpec spec;
  spec.region = request.region;
  spec.pool = request.pool;
  // Check the region alone first: the out sizes below depend on it.
  if (absl::Status s = CheckReadSpec(shape, spec); !s.ok()) return s;
  if (spec.region.rows() == 0 || spec.region.cols() == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the region rows [%u, %u) x cols [%u, %u) is empty: nothing to show",
        spec.region.row_begin, spec.region.row_end, spec.region.col_begin, spec.region.col_end));
  }
  spec.out_rows = std::min(request.rows, spec.region.rows());
  spec.out_cols = std::min(request.cols, spec.region.cols());
  if (absl::Status s = CheckReadSpec(shape, spec); !s.ok()) return s;

  PooledView view;
  view.region = spec.region;
  view.rows = spec.out_rows;
  view.cols = spec.out_cols;
  view.pool = spec.pool;
  view.dtype = ReadBinsType(spec);
  const uint64_t cells = view.rows * view.cols;  // <= 2^32 * 2^32 / ... bounded by the region
  const bool need_maxima = request.mark_saturated && spec.pool == PoolOp::kSum;
  absl::StatusOr<MemoryCharge> charge = budget.Charge(
      ReadBinsBytes(spec) + (need_maxima ? cells : 0),
      absl::StrFormat("a %u x %u view of '%s'", view.rows, view.cols, entry.name()));
  if (!charge.ok()) return charge.status();
  view.charge = *std::move(charge);
  view.values.resize(ReadBinsBytes(spec));
  if (absl::Status s = engine.ReadBins(entry.storage(), spec, view.values.data()); !s.ok()) {
    return s;
  }
  // A cell holding a bin at cap sums to cap or more: when no cell does, no maxima needed.
  const uint32_t cap = entry.spec().shape.cap;
  if (need_maxima && (view.dtype == DType::kU8 ? AnyCellAtLeast<uint8_t>(view, cap)
                                               : AnyCellAtLeast<uint32_t>(view, cap))) {
    ReadSpec max_spec = spec;
    max_spec.pool = PoolOp::kMax;
    view.maxima.resize(cells);
    if (absl::Status s = engine.ReadBins(entry.storage(), max_spec, view.maxima.data()); !s.ok()) {
      return s;
    }
  }
  return view;
}

}  // namespace histd::server
