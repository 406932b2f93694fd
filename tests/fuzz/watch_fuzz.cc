// Fuzz target: Query.Watch without its transport (server/core/watch_view.h: the request's
// checks and the step the gRPC reactor runs every interval), with create, ingest, reset and
// delete changing the watched histograms between reads, against the CPU engine.
//
// Feeds: one serialized histd.fuzz.WatchProgram (histd_fuzz.proto), mutated field by field
// (proto_mutator.h); its calls run in order against the process's core (fuzz_core.h: views
// of at most 64 cells a side, 4 concurrent queries). Up to 6 watches are open at once; each
// holds a query permit as the reactor's does, and every watch still open is closed at the
// end of the input.
// Asserts: a watch opens only for rows and cols (0: 256 and 1024) within --max_render_pixels
// and an interval (0: 1 s) of at least --min_watch_interval; a read of a watch whose
// histogram was deleted answers NOT_FOUND; otherwise a read answers as the independent
// reference does (the bins as stored, from a whole-histogram Query, pooled on the host into
// cell i of n over R bins = [floor(i R / n), floor((i + 1) R / n))): INVALID_ARGUMENT for a
// region outside the histogram or empty, else an update exactly when the reference differs
// from the last update made (the first read always makes one), with sequence one more, the
// requested size (min(rows, region rows) x min(cols, region cols)), the pool's dtype, the
// region, the cap and the reference's cells; no update, and update() untouched, when
// nothing changed. The core keeps serving, with every permit and charge returned (fuzz_core.h).
// INTERNAL or UNKNOWN codes and broken invariants are findings (printed, counted).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "histd_fuzz.pb.h"
#include "server/core/api_histograms.h"
#include "server/core/watch_view.h"
#include "tests/fuzz/fuzz_core.h"

namespace histd::fuzz {
namespace {

namespace api = server::api;

constexpr size_t kMaxOpenWatches = 6;

struct OpenWatch {
  v1::WatchRequest request;
  server::ConcurrencyLimit::Permit permit;
  std::unique_ptr<server::WatchView> view;
  bool deleted = false;      // its histogram was deleted since it opened
  v1::WatchUpdate last;      // the last update it made (sequence 0: none)
};

// The pooled view of `bins` (rows x cols, row-major) the watch's request asks for, as
// little-endian u32 sums or u8 maxima; sets `status` for a region the reference refuses.
struct Reference {
  absl::Status status;
  uint32_t region[4] = {0, 0, 0, 0};  // row_begin, row_end, col_begin, col_end
  uint64_t rows = 0, cols = 0;
  std::string data;
};

Reference PooledReference(const std::string& bins, const v1::HistogramSpec& spec,
                          const v1::WatchRequest& request) {
  Reference ref;
  const v1::Region& r = request.region();
  const bool whole = r.row_begin() == 0 && r.row_end() == 0 && r.col_begin() == 0 && r.col_end() == 0;
  const uint32_t rb = whole ? 0 : r.row_begin(), re = whole ? spec.rows() : r.row_end();
  const uint32_t cb = whole ? 0 : r.col_begin(), ce = whole ? spec.cols() : r.col_end();
  if (rb >= re || cb >= ce || re > spec.rows() || ce > spec.cols()) {
    ref.status = absl::InvalidArgumentError("region");
    return ref;
  }
  ref.region[0] = rb, ref.region[1] = re, ref.region[2] = cb, ref.region[3] = ce;
  const uint64_t region_rows = re - rb, region_cols = ce - cb;
  ref.rows = std::min<uint64_t>(request.rows() != 0 ? request.rows() : 256, region_rows);
  ref.cols = std::min<uint64_t>(request.cols() != 0 ? request.cols() : 1024, region_cols);
  const bool max = request.pool() == v1::POOL_MAX;
  for (uint64_t i = 0; i < ref.rows; ++i) {
    const uint64_t r0 = rb + i * region_rows / ref.rows, r1 = rb + (i + 1) * region_rows / ref.rows;
    for (uint64_t j = 0; j < ref.cols; ++j) {
      const uint64_t c0 = cb + j * region_cols / ref.cols, c1 = cb + (j + 1) * region_cols / ref.cols;
      uint32_t cell = 0;
      for (uint64_t y = r0; y < r1; ++y) {
        for (uint64_t x = c0; x < c1; ++x) {
          const uint8_t bin = static_cast<uint8_t>(bins[y * spec.cols() + x]);
          cell = max ? std::max<uint32_t>(cell, bin) : cell + bin;
        }
      }
      if (max) {
        ref.data.push_back(static_cast<char>(cell));
      } else {
        const char le[4] = {static_cast<char>(cell), static_cast<char>(cell >> 8),
                            static_cast<char>(cell >> 16), static_cast<char>(cell >> 24)};
        ref.data.append(le, 4);
      }
    }
  }
  return ref;
}

void OpenOne(FuzzCore& d, std::vector<OpenWatch>& open, const v1::WatchRequest& request) {
  if (open.size() >= kMaxOpenWatches) return;
  OpenWatch w;
  w.request = request;
  absl::StatusOr<server::ConcurrencyLimit::Permit> permit = d.ctx().queries.TryAcquire();
  absl::Status status = permit.status();
  if (status.ok()) {
    w.permit = *std::move(permit);
    absl::StatusOr<std::unique_ptr<server::WatchView>> view =
        server::WatchView::Open(d.ctx(), request);
    status = view.status();
    if (status.ok()) w.view = *std::move(view);
  }
  d.Check("Watch open", status, request);
  if (!status.ok()) return;
  const server::Options::Render& limits = d.ctx().options->render;
  const uint32_t rows = request.rows() != 0 ? request.rows() : 256;
  const uint32_t cols = request.cols() != 0 ? request.cols() : 1024;
  const absl::Duration interval =
      request.interval_ms() != 0 ? absl::Milliseconds(request.interval_ms()) : absl::Seconds(1);
  if (rows > limits.max_pixels || cols > limits.max_pixels || interval < limits.min_watch_interval ||
      w.view->interval() != interval) {
    d.Finding("Watch open", "opened beyond a limit, interval " +
                                absl::FormatDuration(w.view->interval()), request);
  }
  open.push_back(std::move(w));
}

std::string Describe(const v1::WatchUpdate& u) {
  return absl::StrCat("sequence ", u.sequence(), ", dtype ", u.dtype(), ", ", u.rows(), " x ",
                      u.cols(), ", cap ", u.cap(), ", region ", u.region().ShortDebugString(),
                      ", ", u.data().size(), " bytes");
}

// One due read, checked against the reference. A read that fails ends the stream, as the
// reactor's does.
void RefreshOne(FuzzCore& d, std::vector<OpenWatch>& open, uint32_t which) {
  if (open.empty()) return;
  OpenWatch& w = open[which % open.size()];
  const v1::WatchRequest& request = w.request;
  const v1::WatchUpdate before = w.view->update();
  const absl::StatusOr<bool> changed = w.view->Refresh();
  d.Check("Watch read", changed.status(), request);
  std::string broken;
  if (w.deleted) {
    if (changed.status().code() != absl::StatusCode::kNotFound) {
      broken = "a watch of a deleted histogram read " + changed.status().ToString();
    }
  } else {
    const absl::StatusOr<v1::HistogramInfo> info = d.Info(request.name());
    const absl::StatusOr<std::string> bins = d.Bins(request.name());
    if (!info.ok() || !bins.ok()) {
      broken = "the watched histogram cannot be read: " +
               (info.ok() ? bins.status() : info.status()).ToString();
    } else {
      const Reference ref = PooledReference(*bins, info->spec(), request);
      if (!ref.status.ok()) {
        if (changed.status().code() != absl::StatusCode::kInvalidArgument) {
          broken = "a region outside the histogram read " + changed.status().ToString();
        }
      } else if (!changed.ok()) {
        broken = "the reference reads, the watch answered " + changed.status().ToString();
      } else {
        const bool differs = w.last.sequence() == 0 || w.last.data() != ref.data;
        const v1::WatchUpdate& u = w.view->update();
        const v1::DType dtype = request.pool() == v1::POOL_MAX ? v1::DTYPE_U8 : v1::DTYPE_U32;
        if (*changed != differs) {
          broken = absl::StrCat("changed ", *changed, " but the reference ",
                                differs ? "differs" : "does not differ");
        } else if (!*changed && u.SerializeAsString() != before.SerializeAsString()) {
          broken = "no update, yet update() changed to " + Describe(u);
        } else if (*changed &&
                   (u.sequence() != w.last.sequence() + 1 || u.dtype() != dtype ||
                    u.rows() != ref.rows || u.cols() != ref.cols || u.cap() != info->spec().cap() ||
                    u.region().row_begin() != ref.region[0] || u.region().row_end() != ref.region[1] ||
                    u.region().col_begin() != ref.region[2] || u.region().col_end() != ref.region[3] ||
                    u.data() != ref.data)) {
          broken = absl::StrCat("update ", Describe(u), "; the reference: ", ref.rows, " x ",
                                ref.cols, ", ", ref.data.size(), " bytes",
                                u.data() != ref.data ? ", other cells" : "");
        }
        if (*changed) w.last = u;
      }
    }
  }
  if (!broken.empty()) d.Finding("Watch read", broken, request);
  if (!changed.ok()) open.erase(open.begin() + (which % open.size()));
}

void Run(const WatchProgram& program) {
  FuzzCore& d = FuzzCore::Get();
  server::ServiceContext& ctx = d.ctx();
  std::vector<OpenWatch> open;
  for (int i = 0; i < program.calls_size() && i < kMaxCallsPerInput; ++i) {
    const WatchCall& call = program.calls(i);
    switch (call.call_case()) {
      case WatchCall::kCreate:
        (void)d.Create(call.create());
        break;
      case WatchCall::kIngest:
        d.Ingest(call.ingest());
        break;
      case WatchCall::kWatch:
        OpenOne(d, open, call.watch());
        break;
      case WatchCall::kRefresh:
        RefreshOne(d, open, call.refresh());
        break;
      case WatchCall::kClose:
        if (!open.empty()) open.erase(open.begin() + (call.close() % open.size()));
        break;
      case WatchCall::kDelete: {
        const absl::Status s = api::DeleteHistogram(ctx, call.delete_());
        d.Check("DeleteHistogram", s, call.delete_());
        if (s.ok()) {
          for (OpenWatch& w : open) w.deleted |= w.request.name() == call.delete_().name();
        }
        break;
      }
      case WatchCall::kReset: {
        v1::HistogramInfo response;
        d.Check("ResetHistogram", api::ResetHistogram(ctx, call.reset(), &response), call.reset());
        break;
      }
      case WatchCall::CALL_NOT_SET:
        break;
    }
  }
  open.clear();  // the clients go: permits and charges return
  d.EndInput();
}

}  // namespace
}  // namespace histd::fuzz

HISTD_FUZZ_PROGRAM_TARGET(histd::fuzz::WatchProgram, {"a", "b", "h", "", "missing"})
