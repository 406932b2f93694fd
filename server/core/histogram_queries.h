// Projections, CDFs and quantiles of resident histograms, for every front end (the gRPC
// Query service, the HTTP pages). The engine computes: Reduce on the resident bins, Scan of
// a projection. This file sizes the answer against --max_message_bytes and charges the host
// budget before anything is computed, and turns a CDF into quantile positions.
//
// Thread safety: free functions; ServiceContext's pointees are thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "model/array.h"
#include "server/core/histogram_store.h"
#include "server/core/memory_budget.h"
#include "server/core/service_context.h"

namespace histd::server {

// Room a response needs beside its values (names, totals, framing).
inline constexpr uint64_t kResponseHeaderRoom = 1024;

struct Projection {
  HostArray sums;                         // u64, 1 x n: one sum per column or per row
  std::shared_ptr<HistogramEntry> entry;  // the histogram it came from
  MemoryCharge charge;                    // host memory held until the caller is done
};

// Sums of histogram `name` along `collapse`: Dim::kRows gives one per column, Dim::kCols one
// per row (anything else is INVALID_ARGUMENT). `what` names the call in errors. The answer
// carries `response_bytes_per_value` per value: above --max_message_bytes it is
// RESOURCE_EXHAUSTED before the engine runs. The projection, its scan and the response are
// charged to the host budget.
absl::StatusOr<Projection> ProjectHistogram(const ServiceContext& ctx, const char* what,
                                            const std::string& name, Dim collapse,
                                            uint64_t response_bytes_per_value);

// Inclusive prefix sums of a projection, by the engine (u64, 1 x n).
absl::StatusOr<HostArray> CumulativeSums(Engine& engine, const HostArray& projection);

// Fractional bin position where the CDF `cum` (n = bins, last value total) reaches p * total:
// bin i holds (cum[i-1], cum[i]]; the position moves linearly from i to i + 1 across it.
// p = 0 gives the left edge of the first non-empty bin, p = 1 the right edge of the last
// non-empty bin. Requires 0 <= p <= 1 and total > 0.
double QuantilePosition(const uint64_t* cum, size_t bins, uint64_t total, double p);

}  // namespace histd::server
