// The reactor behind Query.Query: runs a QueryReader (server/core/query_reader.h says how a
// region is cut into bands and chunks), reading its bands on the worker pool and writing
// its chunks (see query_service.h).
// Thread safety: one write or one worker task is outstanding at a time, so the reactor's
// state is touched by one thread at a time (gRPC and the worker queue order the accesses).
#pragma once

#include <cstdint>

#include <grpcpp/support/server_callback.h>

#include "histd/v1/query.pb.h"
#include "server/core/query_reader.h"
#include "server/core/service_context.h"

namespace histd::server {

// Creates the reactor for one Query call and starts it; `permit` (--max_concurrent_queries)
// is held until the stream is done. The stream charges its buffers (its band beyond the
// pooled ones, and two chunks: the one being filled and the one gRPC sends) to the host
// budget before reading, and finishes RESOURCE_EXHAUSTED when they do not fit.
grpc::ServerWriteReactor<v1::QueryChunk>* StartQueryStream(ServiceContext& ctx,
                                                           const v1::QueryRequest& request,
                                                           ConcurrencyLimit::Permit permit);

// A Query stream that finishes at once with `status` (a refusal).
grpc::ServerWriteReactor<v1::QueryChunk>* RefusedQueryStream(const absl::Status& status);

}  // namespace histd::server
