// histd.v1.Ingest: one bidirectional stream per producer (a ServerBidiReactor per stream).
//
// A raw method: requests arrive as the bytes gRPC received and are decoded in place
// (ingest_request_decoder.h), so samples are not copied into a protobuf string first;
// acknowledgements are serialized IngestResponses. The wire format is unchanged.
//
// Per stream: StartRead -> OnReadDone (decode; start the next read while the stream's
// messages not yet staged stay under the read-ahead (backpressure), so gRPC receives the
// next message while this one is staged; after a registration or a shared-memory message
// only once it is staged) -> hand the message to the IngestPipeline -> acknowledgements
// written one at a time, one IngestResponse per request, in request order -> Finish when
// the client has half-closed and every acknowledgement is written -> OnDone. A bad message gets its own
// code and message and does not end the stream.
// Limits: one stream over --max_concurrent_streams is refused with RESOURCE_EXHAUSTED.
// Shutdown: BeginShutdown refuses new streams (UNAVAILABLE) and finishes each open stream
// with UNAVAILABLE as soon as every message it received is applied and acknowledged.
//
// Thread safety: gRPC and pipeline threads call in concurrently; each reactor guards its
// state with its own mutex, never held across a gRPC call.
#pragma once

#include <cstdint>
#include <set>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "histd/v1/ingest.grpc.pb.h"
#include "server/core/service_context.h"

namespace histd::server {

class IngestStreamReactor;

class IngestService final : public v1::Ingest::WithRawCallbackMethod_Ingest<v1::Ingest::Service> {
 public:
  explicit IngestService(ServiceContext* ctx) : ctx_(*ctx) {}

  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* Ingest(
      grpc::CallbackServerContext* context) override;

  void BeginShutdown();
  // After BeginShutdown: returns once every ingest stream has finished (its client
  // half-closed on the notice and got every acknowledgement) or `deadline` passed, whichever
  // is first. The gRPC server's own Shutdown must come after it: that ends pending reads of
  // streams still open, so messages a client has already written would never be read and
  // their fate never told.
  void WaitForStreams(absl::Time deadline);

 private:
  friend class IngestStreamReactor;
  void Unregister(IngestStreamReactor* reactor);

  ServiceContext& ctx_;
  absl::Mutex mu_;
  std::set<IngestStreamReactor*> streams_ ABSL_GUARDED_BY(mu_);
  bool shutting_down_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t next_stream_id_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace histd::server
