#include "server/core/api_query.h"

#include <cmath>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_format.h"
#include "server/core/histogram_queries.h"
#include "server/core/proto_convert.h"
#include "server/core/render.h"

namespace histd::server::api {
namespace {

// The engine's Dim for a projection's collapse field, with the API's names in the error.
absl::StatusOr<Dim> ProjectionCollapse(v1::Dim collapse) {
  if (collapse != v1::DIM_ROWS && collapse != v1::DIM_COLS) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "collapse must be DIM_ROWS (one value per column) or DIM_COLS (one per row), got %s",
        v1::Dim_Name(collapse).empty() ? absl::StrFormat("%d", static_cast<int>(collapse))
                                       : v1::Dim_Name(collapse)));
  }
  return collapse == v1::DIM_ROWS ? Dim::kRows : Dim::kCols;
}

// Projection of the request's histogram along its collapse field (see ProjectHistogram).
template <typename Request>
absl::StatusOr<Projection> ProjectRequest(const ServiceContext& ctx, const char* what,
                                          const Request& request, uint64_t bytes_per_value) {
  absl::StatusOr<Dim> collapse = ProjectionCollapse(request.collapse());
  if (!collapse.ok()) return collapse.status();
  return ProjectHistogram(ctx, what, request.name(), *collapse, bytes_per_value);
}

}  // namespace

absl::Status Project(const ServiceContext& ctx, const v1::ProjectRequest& request,
                     v1::ProjectResponse* response) {
  absl::StatusOr<Projection> projection = ProjectRequest(ctx, "projection", request, 8);
  if (!projection.ok()) return projection.status();
  const uint64_t* v = projection->sums.data<uint64_t>();
  response->mutable_counts()->Add(v, v + projection->sums.cols);
  return absl::OkStatus();
}

absl::Status Cdf(const ServiceContext& ctx, const v1::CdfRequest& request,
                 v1::CdfResponse* response) {
  absl::StatusOr<Projection> projection = ProjectRequest(ctx, "CDF", request, 16);
  if (!projection.ok()) return projection.status();
  absl::StatusOr<HostArray> cdf = CumulativeSums(*ctx.engine, projection->sums);
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
}

absl::Status Quantiles(const ServiceContext& ctx, const v1::QuantilesRequest& request,
                       v1::QuantilesResponse* response) {
  const uint64_t answer_bytes = uint64_t(request.probabilities_size()) * 16;
  if (answer_bytes > uint64_t(ctx.options->limits.max_message_bytes) - kResponseHeaderRoom) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "%d probabilities need a %d-byte response, more than --max_message_bytes=%d allows",
        request.probabilities_size(), answer_bytes, ctx.options->limits.max_message_bytes));
  }
  for (int i = 0; i < request.probabilities_size(); ++i) {
    const double p = request.probabilities(i);
    if (!(p >= 0.0 && p <= 1.0)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("probabilities[%d] = %g is outside [0, 1]", i, p));
    }
  }
  // The response carries two doubles per probability, not per bin: nothing to size here.
  absl::StatusOr<Projection> projection = ProjectRequest(ctx, "quantiles", request, 0);
  if (!projection.ok()) return projection.status();
  const std::shared_ptr<HistogramEntry>& entry = projection->entry;
  absl::StatusOr<HostArray> cdf = CumulativeSums(*ctx.engine, projection->sums);
  if (!cdf.ok()) return cdf.status();
  const uint64_t* c = cdf->data<uint64_t>();
  const size_t n = cdf->cols;
  const uint64_t total = n == 0 ? 0 : c[n - 1];
  if (total == 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "histogram '%s' is empty: quantiles are undefined", request.name()));
  }
  // CDF over rows (collapse the columns) lies on the y axis; over columns on the x axis.
  const std::optional<AxisRange>& axis =
      request.collapse() == v1::DIM_COLS ? entry->spec().y_axis : entry->spec().x_axis;
  for (double p : request.probabilities()) {
    const double position = QuantilePosition(c, n, total, p);
    response->add_bin_positions(position);
    if (axis) {
      const double lo = axis->lo, hi = axis->hi;
      response->add_axis_values(lo + position * (hi - lo) / static_cast<double>(n));
    }
  }
  response->set_total(total);
  return absl::OkStatus();
}

absl::Status Render(const ServiceContext& ctx, const v1::RenderRequest& request,
                    v1::RenderResponse* response) {
  absl::StatusOr<std::shared_ptr<HistogramEntry>> entry = ctx.store->Find(request.name());
  if (!entry.ok()) return entry.status();
  absl::StatusOr<RenderSpec> spec = RenderSpecFromProto(request, (*entry)->spec().shape);
  if (!spec.ok()) return spec.status();
  absl::StatusOr<RenderedPng> png = RenderHistogram(*ctx.engine, *ctx.store, *ctx.host_budget,
                                                    *spec, ctx.options->render.max_pixels);
  if (!png.ok()) return png.status();
  const uint64_t limit = static_cast<uint64_t>(ctx.options->limits.max_message_bytes);
  if (png->png.size() > limit - kResponseHeaderRoom) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "the %d x %d PNG of '%s' has %d bytes, more than --max_message_bytes=%d allows",
        png->width, png->height, request.name(), png->png.size(), limit));
  }
  response->set_png(std::move(png->png));
  response->set_width(png->width);
  response->set_height(png->height);
  RegionToProto(png->region, response->mutable_region());
  response->set_zmin(png->z.zmin);
  response->set_zmax(png->z.zmax);
  return absl::OkStatus();
}

}  // namespace histd::server::api
