// The reactor behind Histograms.ReadAndResetHistogram: one monitoring cycle of a histogram.
//
// On a worker, ReadAndResetReader (server/core/read_and_reset_reader.h) checks and charges
// the call, then reads and resets unless the call is cancelled by then (a call cancelled
// before the reset resets nothing); then its chunks stream, the first carrying the cycle's
// HistogramInfo.
//
// Why a stream of chunks rather than one response: a 256 x 8192 histogram (2 MiB) would fit
// one message, but a 2^28-bin one (256 MiB) exceeds --max_message_bytes (64 MiB by
// default) and gRPC's practical message sizes; one shape serves both, and the small case
// costs two or three chunks of 1 MiB.
//
// Thread safety: one write or one worker task is outstanding at a time, so the reactor's
// state is touched by one thread at a time.
#pragma once

#include <grpcpp/support/server_callback.h>

#include "absl/status/status.h"
#include "histd/v1/histograms.pb.h"
#include "server/core/concurrency_limit.h"
#include "server/core/service_context.h"

namespace histd::server {

// Creates the reactor for one call and starts it; `permit` (--max_concurrent_queries) is
// held until the stream is done.
grpc::ServerWriteReactor<v1::ReadAndResetChunk>* StartReadAndResetStream(
    ServiceContext& ctx, grpc::CallbackServerContext* context,
    const v1::ReadAndResetHistogramRequest& request, ConcurrencyLimit::Permit permit);

// A stream that finishes at once with `status` (a refusal).
grpc::ServerWriteReactor<v1::ReadAndResetChunk>* RefusedReadAndResetStream(
    const absl::Status& status);

}  // namespace histd::server
