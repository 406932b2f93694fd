// One Query.Watch call without its transport: the request's checks, and the step "read the
// pooled view; make the next update when it changed". The gRPC reactor
// (server/grpc/watch_stream.h) schedules the reads every interval and writes the updates;
// the fuzz targets (tests/fuzz/) drive it directly.
//
// Open finds the histogram (NOT_FOUND), checks the pool, the view's size (rows and cols at
// most --max_render_pixels; 0: 256 rows, 1024 columns) and the interval (at least
// --min_watch_interval; 0: 1 s) (INVALID_ARGUMENT), and charges the update message for the
// view's life (the largest view: 4 bytes a cell) to the host budget (RESOURCE_EXHAUSTED
// naming it). The region is checked by each read (server/core/pooled_view.h: INVALID_ARGUMENT
// for one outside the histogram or empty).
//
// Refresh answers NOT_FOUND once the watched histogram is deleted (also when another has
// been created under its name since). Else it reads the pooled view (one engine call, its
// buffer charged while it runs). When it
// differs from the last update made (the first read always does), update() becomes the next
// update to send: sequence one more, dtype DTYPE_U32 for POOL_SUM and DTYPE_U8 for
// POOL_MAX, min(rows, the region's rows) x min(cols, its cols) cells, the region, the cap.
// Otherwise update() stays as it was and nothing is to be sent.
//
// Thread safety: one thread at a time (the reactor orders its calls); update() must not be
// read while Refresh runs.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "histd/v1/query.pb.h"
#include "server/core/histogram_store.h"
#include "server/core/memory_budget.h"
#include "server/core/pooled_view.h"
#include "server/core/service_context.h"

namespace histd::server {

class WatchView {
 public:
  static absl::StatusOr<std::unique_ptr<WatchView>> Open(const ServiceContext& ctx,
                                                         const v1::WatchRequest& request);

  // How often the reactor reads.
  absl::Duration interval() const { return interval_; }
  // True when update() is a new update to send; false when the view is unchanged.
  absl::StatusOr<bool> Refresh();
  const v1::WatchUpdate& update() const { return update_; }

 private:
  explicit WatchView(const ServiceContext& ctx) : ctx_(ctx) {}
  absl::Status Prepare(const v1::WatchRequest& request);

  const ServiceContext& ctx_;
  MemoryCharge charge_;  // the update message, for the view's life
  std::shared_ptr<HistogramEntry> entry_;
  ViewRequest view_;
  absl::Duration interval_;
  v1::WatchUpdate update_;  // the last update made (sequence 0: none yet)
};

}  // namespace histd::server
