#include "server/core/histogram_queries.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_format.h"

namespace histd::server {

absl::StatusOr<Projection> ProjectHistogram(const ServiceContext& ctx, const char* what,
                                            const std::string& name, Dim collapse,
                                            uint64_t response_bytes_per_value) {
  if (collapse != Dim::kRows && collapse != Dim::kCols) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s collapses the rows (one value per column) or the columns (one per row)", what));
  }
  absl::StatusOr<std::shared_ptr<HistogramEntry>> entry = ctx.store->Find(name);
  if (!entry.ok()) return entry.status();
  const HistogramShape& shape = (*entry)->spec().shape;
  const uint64_t values = collapse == Dim::kRows ? shape.cols : shape.rows;
  // Checked before anything is computed (values < 2^32 and bytes per value <= 16: no overflow).
  const uint64_t limit = static_cast<uint64_t>(ctx.options->limits.max_message_bytes);
  if (values * response_bytes_per_value > limit - kResponseHeaderRoom) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "%s of '%s' has %d values, %d bytes, more than --max_message_bytes=%d allows; read "
        "the histogram with Query (streamed in chunks) instead",
        what, name, values, values * response_bytes_per_value, limit));
  }
  Projection out;
  // The projection and its scan (8 bytes a value each) and the response.
  absl::StatusOr<MemoryCharge> charged = ctx.host_budget->Charge(
      values * (16 + response_bytes_per_value), absl::StrFormat("%s of '%s'", what, name));
  if (!charged.ok()) return charged.status();
  out.charge = *std::move(charged);
  ArrayRef bins{DType::kU8, shape.rows, shape.cols, nullptr, &(*entry)->storage()};
  absl::StatusOr<HostArray> sums = ctx.engine->Reduce(bins, ReduceOp::kSum, collapse);
  if (!sums.ok()) return sums.status();
  if (sums->dtype != DType::kU64) {
    return absl::InternalError(absl::StrFormat("engine returned a %s projection, expected u64",
                                               DTypeName(sums->dtype)));
  }
  // rows x 1 and 1 x cols are the same vector in row-major order.
  sums->cols = sums->rows * sums->cols;
  sums->rows = 1;
  out.sums = *std::move(sums);
  out.entry = *std::move(entry);
  return out;
}

absl::StatusOr<HostArray> CumulativeSums(Engine& engine, const HostArray& projection) {
  absl::StatusOr<HostArray> cdf = engine.Scan(projection.ref(), /*inclusive=*/true, Dim::kAll);
  if (!cdf.ok()) return cdf.status();
  if (cdf->dtype != DType::kU64 || cdf->rows * cdf->cols != projection.cols) {
    return absl::InternalError("engine returned a malformed scan of the projection");
  }
  return cdf;
}

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

}  // namespace histd::server
