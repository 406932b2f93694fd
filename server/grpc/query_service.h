// histd.v1.Query: region reads (streamed in chunks), projections, CDFs and quantiles.
//
// Query streams the result as QueryChunks of at most max_chunk_bytes (the first carries the
// header). The server reads the region band by band (about max(chunk, 1 MiB) per engine
// call), so a query holds one band in memory whatever the histogram size. Each band
// reflects every sample acknowledged before the query began; bands read later may also see
// samples acknowledged since. Engine calls run on the worker pool.
// Projections are Engine::Reduce (SUM collapsing a Dim) on the resident histogram; a CDF is
// Engine::Scan of the projection; quantiles interpolate linearly inside the bin where the
// CDF reaches p * total.
// Render draws a PNG heatmap of a pooled view (server/core/render.h); Watch streams a pooled view
// when it changes (server/grpc/watch_stream.h). Both count against --max_concurrent_queries.
// Thread safety: gRPC calls the methods concurrently; all state lives in ServiceContext.
#pragma once

#include "histd/v1/query.grpc.pb.h"
#include "server/core/service_context.h"
#include "server/grpc/watch_stream.h"

namespace histd::server {

class QueryService final : public v1::Query::CallbackService {
 public:
  explicit QueryService(ServiceContext* ctx) : ctx_(*ctx) {}

  grpc::ServerWriteReactor<v1::QueryChunk>* Query(grpc::CallbackServerContext* context,
                                                  const v1::QueryRequest* request) override;
  grpc::ServerUnaryReactor* Project(grpc::CallbackServerContext* context,
                                    const v1::ProjectRequest* request,
                                    v1::ProjectResponse* response) override;
  grpc::ServerUnaryReactor* Cdf(grpc::CallbackServerContext* context,
                                const v1::CdfRequest* request, v1::CdfResponse* response) override;
  grpc::ServerUnaryReactor* Quantiles(grpc::CallbackServerContext* context,
                                      const v1::QuantilesRequest* request,
                                      v1::QuantilesResponse* response) override;
  grpc::ServerUnaryReactor* Render(grpc::CallbackServerContext* context,
                                   const v1::RenderRequest* request,
                                   v1::RenderResponse* response) override;
  grpc::ServerWriteReactor<v1::WatchUpdate>* Watch(grpc::CallbackServerContext* context,
                                                   const v1::WatchRequest* request) override;

  // Ends every Watch stream (UNAVAILABLE) and refuses new ones; before the gRPC server's
  // Shutdown, which would otherwise wait out the grace period for them.
  void BeginShutdown() { watches_.BeginShutdown(); }

 private:
  ServiceContext& ctx_;
  WatchRegistry watches_;
};

}  // namespace histd::server
