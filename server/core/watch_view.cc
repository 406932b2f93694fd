#include "server/core/watch_view.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_format.h"
#include "server/core/proto_convert.h"

namespace histd::server {
namespace {

constexpr uint32_t kDefaultRows = 256, kDefaultCols = 1024;
constexpr absl::Duration kDefaultInterval = absl::Seconds(1);

}  // namespace

absl::StatusOr<std::unique_ptr<WatchView>> WatchView::Open(const ServiceContext& ctx,
                                                           const v1::WatchRequest& request) {
  std::unique_ptr<WatchView> watch(new WatchView(ctx));
  if (absl::Status s = watch->Prepare(request); !s.ok()) return s;
  return watch;
}

absl::Status WatchView::Prepare(const v1::WatchRequest& request) {
  absl::StatusOr<std::shared_ptr<HistogramEntry>> entry = ctx_.store->Find(request.name());
  if (!entry.ok()) return entry.status();
  entry_ = *std::move(entry);
  const Options::Render& limits = ctx_.options->render;
  absl::StatusOr<PoolOp> pool = PoolFromProto(request.pool());
  if (!pool.ok()) return pool.status();
  view_.pool = *pool;
  view_.region = ResolveRegion(RegionFromProto(request.region()), entry_->spec().shape);
  view_.rows = request.rows() != 0 ? request.rows() : kDefaultRows;
  view_.cols = request.cols() != 0 ? request.cols() : kDefaultCols;
  if (view_.rows > limits.max_pixels || view_.cols > limits.max_pixels) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "a watched view has at most %u rows and cols (--max_render_pixels), got %u x %u",
        limits.max_pixels, view_.rows, view_.cols));
  }
  interval_ = request.interval_ms() != 0 ? absl::Milliseconds(request.interval_ms())
                                         : kDefaultInterval;
  if (interval_ < limits.min_watch_interval) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "interval_ms %u is below --min_watch_interval=%s", request.interval_ms(),
        absl::FormatDuration(limits.min_watch_interval)));
  }
  absl::StatusOr<MemoryCharge> charge = ctx_.host_budget->Charge(
      uint64_t{view_.rows} * view_.cols * 4 + 4096,
      absl::StrFormat("a watch of '%s'", request.name()));
  if (!charge.ok()) return charge.status();
  charge_ = *std::move(charge);
  return absl::OkStatus();
}

absl::StatusOr<bool> WatchView::Refresh() {
  // The watched histogram, not whichever now has its name.
  absl::StatusOr<std::shared_ptr<HistogramEntry>> current = ctx_.store->Find(entry_->name());
  if (!current.ok() || *current != entry_) {
    return absl::NotFoundError(
        absl::StrFormat("histogram '%s' was deleted while watched", entry_->name()));
  }
  absl::StatusOr<PooledView> view =
      ReadPooledView(*ctx_.engine, *ctx_.host_budget, *entry_, view_);
  if (!view.ok()) return view.status();
  if (update_.sequence() != 0 && update_.data().size() == view->values.size() &&
      std::memcmp(update_.data().data(), view->values.data(), view->values.size()) == 0) {
    return false;
  }
  update_.set_sequence(update_.sequence() + 1);
  update_.set_dtype(DTypeToProto(view->dtype));
  update_.set_rows(view->rows);
  update_.set_cols(view->cols);
  update_.set_cap(entry_->spec().shape.cap);
  RegionToProto(view->region, update_.mutable_region());
  update_.set_data(view->values.data(), view->values.size());
  return true;
}

}  // namespace histd::server
