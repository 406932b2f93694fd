#include "server/query_service.h"

#include <cmath>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "server/query_stream.h"
#include "server/status_util.h"
#include "server/unary_reactor.h"

namespace histd::server {
namespace {

// Sums of the histogram along `collapse` (DIM_ROWS: one per column; DIM_COLS: one per row),
// as a u64 1 x n array, computed by the engine on the resident bins.
constexpr uint64_t kResponseHeaderRoom = 1024;  // a response's fields beside its values

// `what` names the call in errors; `bytes_per_value` is what its response carries per value
// (the size is checked before the engine runs); `charge` receives the host memory the call
// holds, released when the caller is done.
absl::StatusOr<HostArray> Projection(ServiceContext& ctx, const char* what,
                                     const std::string& name, v1::Dim collapse,
                                     uint64_t bytes_per_value, MemoryCharge* charge,
                                     std::shared_ptr<HistogramEntry>* entry_out) {
  if (collapse != v1::DIM_ROWS && collapse != v1::DIM_COLS) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "collapse must be DIM_ROWS (one value per column) or DIM_COLS (one per row), got %s",
        v1::Dim_Name(collapse).empty() ? absl::StrFormat("%d", static_cast<int>(collapse))
                                       : v1::Dim_Name(collapse)));
  }
  absl::StatusOr<std::shared_ptr<HistogramEntry>> entry = ctx.store->Find(name);
  if (!entry.ok()) return entry.status();
  const HistogramShape& shape = (*entry)->spec().shape;
  const uint64_t values = collapse == v1::DIM_ROWS ? shape.cols : shape.rows;
  // Checked before anything is computed: the response carries bytes_per_value per value.
  const uint64_t limit = static_cast<uint64_t>(ctx.options->limits.max_message_bytes);
  if (values * bytes_per_value > limit - kResponseHeaderRoom) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "%s of '%s' has %d values, %d bytes, more than --max_message_bytes=%d allows; read "
        "the histogram with Query (streamed in chunks) instead",
        what, name, values, values * bytes_per_value, limit));
  }
  // The projection and its scan (8 bytes a value each) and the response.
  absl::StatusOr<MemoryCharge> charged = ctx.host_budget->Charge(
      values * (16 + bytes_per_value), absl::StrFormat("%s of '%s'", what, name));
  if (!charged.ok()) return charged.status();
  *charge = *std::move(charged);
  ArrayRef bins{DType::kU8, shape.rows, shape.cols, nullptr, &(*entry)->storage()};
  absl::StatusOr<HostArray> sums = ctx.engine->Reduce(
      bins, Engine::ReduceOp::kSum, collapse == v1::DIM_ROWS ? Dim::kRows : Dim::kCols);
  if (!sums.ok()) return sums.status();
  if (sums->dtype != DType::kU64) {
    return absl::InternalError(absl::StrFormat("engine returned a %s projection, expected u64",
                                               DTypeName(sums->dtype)));
  }
  // rows x 1 and 1 x cols are the same vector in row-major order.
  sums->cols = sums->rows * sums->cols;
  sums->rows = 1;
  if (entry_out != nullptr) *entry_out = *std::move(entry);
  return sums;
}

// Inclusive prefix sums of a projection, by the engine.
absl::StatusOr<HostArray> Cumulative(ServiceContext& ctx, const HostArray& projection) {
  absl::StatusOr<HostArray> cdf = ctx.engine->Scan(projection.ref(), /*inclusive=*/true, Dim::kAll);
  if (!cdf.ok()) return cdf.status();
  if (cdf->dtype != DType::kU64 || cdf->rows * cdf->cols != projection.cols) {
    return absl::InternalError("engine returned a malformed scan of the projection");
  }
  return cdf;
}

// Fractional bin position where the CDF reaches p * total: bin i holds (cum[i-1], cum[i]];
// the position moves linearly from i to i + 1 across it. p = 0 gives the left edge of the
// first non-empty bin, p = 1 the right edge of the last non-empty bin.
double QuantilePosition(const uint64_t* cum, size_t bins, uint64_t total, double p) {
  const double target = p * static_cast<double>(total);
  size_t lo = 0, hi = bins;  // first i with cum[i] >= target (and cum[i] > 0 when target == 0)
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    const double c = static_cast<double>(cum[mid]);
    if (c > target || (c == target && cum[mid] > 0)) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  if (lo >= bins) return static_cast<double>(bins);
  const double before = lo == 0 ? 0.0 : static_cast<double>(cum[lo - 1]);
  const double in_bin = static_cast<double>(cum[lo]) - before;
  const double frac = in_bin > 0 ? (target - before) / in_bin : 0.0;
  return static_cast<double>(lo) + std::min(1.0, std::max(0.0, frac));
}

// Finishes a unary call at once with `status` (a refusal: nothing was scheduled).
grpc::ServerUnaryReactor* Refused(grpc::CallbackServerContext* context, const absl::Status& status) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(ToGrpcStatus(status));
  return reactor;
}

}  // namespace

grpc::ServerWriteReactor<v1::QueryChunk>* QueryService::Query(grpc::CallbackServerContext* /*context*/,
                                                              const v1::QueryRequest* request) {
  absl::StatusOr<ConcurrencyLimit::Permit> permit = ctx_.queries.TryAcquire();
  if (!permit.ok()) return RefusedQueryStream(permit.status());
  return StartQueryStream(ctx_, *request, *std::move(permit));
}

grpc::ServerUnaryReactor* QueryService::Project(grpc::CallbackServerContext* context,
                                                const v1::ProjectRequest* request,
                                                v1::ProjectResponse* response) {
  absl::StatusOr<ConcurrencyLimit::Permit> permit = ctx_.queries.TryAcquire();
  if (!permit.ok()) return Refused(context, permit.status());
  return RunOnWorkers(context, *ctx_.workers,
                      [this, request, response,
                       permit = std::make_shared<ConcurrencyLimit::Permit>(
                           *std::move(permit))]() -> absl::Status {
    MemoryCharge charge;
    absl::StatusOr<HostArray> sums = Projection(ctx_, "projection", request->name(),
                                                request->collapse(), 8, &charge, nullptr);
    if (!sums.ok()) return sums.status();
    const uint64_t* v = sums->data<uint64_t>();
    response->mutable_counts()->Add(v, v + sums->cols);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* QueryService::Cdf(grpc::CallbackServerContext* context,
                                            const v1::CdfRequest* request,
                                            v1::CdfResponse* response) {
  absl::StatusOr<ConcurrencyLimit::Permit> permit = ctx_.queries.TryAcquire();
  if (!permit.ok()) return Refused(context, permit.status());
  return RunOnWorkers(context, *ctx_.workers,
                      [this, request, response,
                       permit = std::make_shared<ConcurrencyLimit::Permit>(
                           *std::move(permit))]() -> absl::Status {
    MemoryCharge charge;
    absl::StatusOr<HostArray> sums = Projection(ctx_, "CDF", request->name(),
                                                request->collapse(), 16, &charge, nullptr);
    if (!sums.ok()) return sums.status();
    absl::StatusOr<HostArray> cdf = Cumulative(ctx_, *sums);
    if (!cdf.ok()) return cdf.status();
    const uint64_t* c = cdf->data<uint64_t>();
    const size_t n = cdf->cols;
    const uint64_t total = n == 0 ? 0 : c[n - 1];
    response->mutable_cumulative()->Add(c, c + n);
    response->mutable_fraction()->Reserve(n);
    for (size_t i = 0; i < n; ++i) {
      response->add_fraction(total == 0 ? 0.0 : static_cast<double>(c[i]) / total);
    }
    response->set_total(total);
    return absl::OkStatus();
  });
}

grpc::ServerUnaryReactor* QueryService::Quantiles(grpc::CallbackServerContext* context,
                                                  const v1::QuantilesRequest* request,
                                                  v1::QuantilesResponse* response) {
  absl::StatusOr<ConcurrencyLimit::Permit> permit = ctx_.queries.TryAcquire();
  if (!permit.ok()) return Refused(context, permit.status());
  return RunOnWorkers(context, *ctx_.workers,
                      [this, request, response,
                       permit = std::make_shared<ConcurrencyLimit::Permit>(
                           *std::move(permit))]() -> absl::Status {
    const uint64_t answer_bytes = uint64_t(request->probabilities_size()) * 16;
    if (answer_bytes > uint64_t(ctx_.options->limits.max_message_bytes) - kResponseHeaderRoom) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "%d probabilities need a %d-byte response, more than --max_message_bytes=%d allows",
          request->probabilities_size(), answer_bytes, ctx_.options->limits.max_message_bytes));
    }
    for (int i = 0; i < request->probabilities_size(); ++i) {
      const double p = request->probabilities(i);
      if (!(p >= 0.0 && p <= 1.0)) {
        return absl::InvalidArgumentError(
            absl::StrFormat("probabilities[%d] = %g is outside [0, 1]", i, p));
      }
    }
    std::shared_ptr<HistogramEntry> entry;
    MemoryCharge charge;
    // The response carries two doubles per probability, not per bin: nothing to size here.
    absl::StatusOr<HostArray> sums = Projection(ctx_, "quantiles", request->name(),
                                                request->collapse(), 0, &charge, &entry);
    if (!sums.ok()) return sums.status();
    absl::StatusOr<HostArray> cdf = Cumulative(ctx_, *sums);
    if (!cdf.ok()) return cdf.status();
    const uint64_t* c = cdf->data<uint64_t>();
    const size_t n = cdf->cols;
    const uint64_t total = n == 0 ? 0 : c[n - 1];
    if (total == 0) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "histogram '%s' is empty: quantiles are undefined", request->name()));
    }
    // CDF over rows (collapse the columns) lies on the y axis; over columns on the x axis.
    const std::optional<AxisRange>& axis =
        request->collapse() == v1::DIM_COLS ? entry->spec().y_axis : entry->spec().x_axis;
    for (double p : request->probabilities()) {
      const double position = QuantilePosition(c, n, total, p);
      response->add_bin_positions(position);
      if (axis) {
        const double lo = axis->lo, hi = axis->hi;
        response->add_axis_values(lo + position * (hi - lo) / static_cast<double>(n));
      }
    }
    response->set_total(total);
    return absl::OkStatus();
  });
}

}  // namespace histd::server
