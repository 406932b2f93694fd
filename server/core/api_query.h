// histd.v1.Query's unary calls without their transport: projections, CDFs, quantiles and
// rendered heatmaps of resident histograms (Query itself streams: server/core/query_reader.h).
// The gRPC service (server/grpc/query_service.h) takes a --max_concurrent_queries permit and
// runs these on its worker pool; the fuzz targets (tests/fuzz/) call them directly.
//
// Projections are Engine::Reduce (SUM collapsing a Dim) on the resident histogram; a CDF is
// Engine::Scan of the projection; quantiles interpolate linearly inside the bin where the
// CDF reaches p * total (server/core/histogram_queries.h sizes and charges them). Every
// answer is sized against --max_message_bytes before the engine runs (RESOURCE_EXHAUSTED
// naming it). Errors are absl::Status with the code the API documents; the response is
// filled only on OK.
// Thread safety: free functions; ServiceContext's pointees are thread-safe.
#pragma once

#include "absl/status/status.h"
#include "histd/v1/query.pb.h"
#include "server/core/service_context.h"

namespace histd::server::api {

absl::Status Project(const ServiceContext& ctx, const v1::ProjectRequest& request,
                     v1::ProjectResponse* response);
absl::Status Cdf(const ServiceContext& ctx, const v1::CdfRequest& request,
                 v1::CdfResponse* response);
absl::Status Quantiles(const ServiceContext& ctx, const v1::QuantilesRequest& request,
                       v1::QuantilesResponse* response);
absl::Status Render(const ServiceContext& ctx, const v1::RenderRequest& request,
                    v1::RenderResponse* response);

}  // namespace histd::server::api
