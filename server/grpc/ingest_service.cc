#include "server/grpc/ingest_service.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "server/core/api_ingest.h"
#include "server/core/log.h"
#include "server/core/shm_registry.h"
#include "server/grpc/ingest_request_decoder.h"
#include "server/grpc/status_util.h"
#include "server/grpc/authorize_call.h"

namespace histd::server {
namespace {

// A peer on this host: a Unix socket, or a loopback address (gRPC's peer strings).
bool IsLocalPeer(const std::string& peer) {
  return absl::StartsWith(peer, "unix:") || absl::StartsWith(peer, "ipv4:127.") ||
         absl::StartsWith(peer, "ipv6:[::1]") || absl::StartsWith(peer, "ipv6:%5B::1%5D") ||
         absl::StartsWith(peer, "ipv6:[::ffff:127.") ||
         absl::StartsWith(peer, "ipv6:%5B::ffff:127.");
}

// A stream refused before it starts (limit reached, shutting down).
class RefusedStream final : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  explicit RefusedStream(grpc::Status status) { Finish(std::move(status)); }
  void OnDone() override { delete this; }
};

}  // namespace

class IngestStreamReactor final
    : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  IngestStreamReactor(IngestService* service, ServiceContext* ctx, uint64_t id, std::string peer)
      : service_(*service), ctx_(*ctx), id_(id), peer_(std::move(peer)) {}

  // Called once registered: issues the first read.
  void Begin() {
    Actions actions;
    {
      absl::MutexLock lock(&mu_);
      actions = NextActionsLocked();
    }
    Perform(this, actions);
  }

  // Shutdown: queues the shutdown notice (see IngestResponse) after the acks of every
  // message received so far; later messages are acknowledged UNAVAILABLE, not applied; the
  // stream finishes once the client half-closes and every ack is written (or gRPC cancels
  // it at the end of the grace). Returns a continuation the caller runs after releasing the
  // service lock (Finish may run OnDone, which takes that lock). Until then the reactor
  // cannot be deleted: a write or finish held by the continuation keeps Finish from
  // running elsewhere (writing_ / finished_ are set under mu_).
  std::function<void()> BeginStop() {
    Actions actions;
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
      if (!reads_done_ && !finished_) {
        auto notice = std::make_shared<PendingAck>();
        notice->response.set_server_shutting_down(true);
        notice->response.set_code(grpc::StatusCode::UNAVAILABLE);
        notice->response.set_message(
            "histd is shutting down: every message received before this notice is "
            "acknowledged above; half-close the stream");
        notice->done = true;
        pending_.push_back(std::move(notice));
      }
      actions = NextActionsLocked();
    }
    if (!actions.any()) return nullptr;
    return [this, actions] { Perform(this, actions); };
  }

  void OnReadDone(bool ok) override {
    if (!ok) {  // half-close by the client, cancellation, or a finished stream
      Actions actions;
      {
        absl::MutexLock lock(&mu_);
        read_outstanding_ = false;
        reads_done_ = true;
        actions = NextActionsLocked();
      }
      Perform(this, actions);
      return;
    }
    // Decode in place: the samples stay in the slices they arrived in (SamplePayload).
    absl::StatusOr<DecodedIngestRequest> request = DecodeIngestRequest(request_);
    const size_t message_bytes = request_.Length();
    const size_t charge = std::max(message_bytes, kReadAheadMinChargeBytes);
    request_.Clear();  // the payload holds its own references to the slices
    auto ack = std::make_shared<PendingAck>();
    if (ctx_.metrics != nullptr) ack->received = std::chrono::steady_clock::now();
    if (request.ok()) ack->response.set_sequence(request->sequence);
    // A message of samples touches nothing of the stream's own after this point, so the
    // next read starts now, within the read-ahead, and gRPC receives the next message while
    // this one is validated and staged (its callback may run meanwhile, on another thread).
    // Registrations and shared-memory messages use the stream's region table: the next read
    // waits until they are done.
    const bool read_on = request.ok() && !request->has_register_shm &&
                         request->unregister_shm.empty() && !request->has_shm;
    // Such a message finds its histogram before the next read starts, so a stream's messages
    // meet a concurrent delete (or delete and create) in stream order: once one gets
    // NOT_FOUND, so does every later one, and none is applied to a histogram an earlier
    // message no longer found.
    const absl::Status size_status = api::CheckIngestMessageSize(ctx_, message_bytes);
    std::optional<absl::StatusOr<IngestPipeline::Message>> message;
    if (read_on && size_status.ok()) {
      message = api::IngestMessageFor(ctx_, request->histogram, request->type,
                                      std::move(request->samples));
    }
    bool after_notice;
    Actions early;
    {
      absl::MutexLock lock(&mu_);
      read_outstanding_ = false;
      if (finished_) return;  // cancelled while this read was pending
      pending_.push_back(ack);
      ++received_;
      after_notice = stopping_;
      if (!after_notice) staging_bytes_ += charge;
      if (read_on && !after_notice) early = NextActionsLocked();
    }
    Perform(this, early);
    if (after_notice) {
      OnAck(ack, absl::UnavailableError("histd is shutting down; message not applied"), 0);
      return;
    }
    if (!request.ok()) {
      OnAck(ack, request.status(), 0);
      OnStaged(charge);
      return;
    }
    // gRPC reads messages up to twice the limit (server.cc) so that one over it is refused
    // here, on its own, and the stream goes on.
    if (!size_status.ok()) {
      OnAck(ack, size_status, 0);
      OnStaged(charge);
      return;
    }
    if (request->has_register_shm || !request->unregister_shm.empty()) {
      OnAck(ack, RegisterOrUnregister(*request), 0);
      OnStaged(charge);
      return;
    }
    if (!message.has_value()) {
      message = api::IngestMessageFor(ctx_, request->histogram, request->type,
                                      std::move(request->samples));
    }
    if (!message->ok()) {
      OnAck(ack, message->status(), 0);
      OnStaged(charge);
      return;
    }
    if (request->has_shm) {
      absl::Status status = ResolveShm(request->shm, &**message);
      if (!status.ok()) {
        (*message)->histogram->RecordRejected(0);
        OnAck(ack, status, 0);
        OnStaged(charge);
        return;
      }
    }
    ctx_.pipeline->Submit(
        **std::move(message), [this, charge] { OnStaged(charge); },
        [this, ack](absl::Status status, uint64_t count) { OnAck(ack, std::move(status), count); });
  }

  void OnWriteDone(bool ok) override {
    Actions actions;
    {
      absl::MutexLock lock(&mu_);
      writing_ = false;
      if (!ok) write_failed_ = true;  // the client is gone: later acks are dropped
      actions = NextActionsLocked();
    }
    Perform(this, actions);
  }

  void OnDone() override {
    service_.Unregister(this);
    {
      absl::MutexLock lock(&mu_);  // no callback is left; the lock satisfies the annotations
      // acks_undelivered: acknowledgements whose write failed (the client had gone).
      LogInfo("ingest_stream_closed", {{"stream", id_},
                                       {"peer", peer_},
                                       {"messages_received", received_},
                                       {"messages_applied", applied_},
                                       {"samples_applied", samples_applied_},
                                       {"messages_rejected", rejected_},
                                       {"first_rejection", first_rejection_},
                                       {"acks_undelivered", acks_dropped_}});
    }
    delete this;
  }

 private:
  struct PendingAck {
    v1::IngestResponse response;
    bool done = false;
    std::chrono::steady_clock::time_point received;  // with metrics only
  };
  // What NextActionsLocked decided; each must be performed once it is decided (a read
  // decided and not started leaves read_outstanding_ set forever).
  struct Actions {
    bool read = false;
    const grpc::ByteBuffer* write = nullptr;
    std::optional<grpc::Status> finish;
    bool any() const { return read || write != nullptr || finish.has_value(); }
  };

  // A registration or unregistration of a shared-memory region (docs/shm-ingest.md).
  absl::Status RegisterOrUnregister(const DecodedIngestRequest& request) {
    if (request.has_register_shm + !request.unregister_shm.empty() + request.has_shm != 1 ||
        !request.histogram.empty() || request.type != 0 || request.samples.size() != 0) {
      return absl::InvalidArgumentError(
          "a shared-memory registration or unregistration carries nothing else (no histogram, "
          "type, samples or shm); nothing was done");
    }
    if (absl::Status s = ShmAllowed(); !s.ok()) return s;
    if (!request.unregister_shm.empty()) {
      absl::Status status = shm_regions_.Unregister(request.unregister_shm);
      if (status.ok()) {
        LogInfo("shm_region_unregistered", {{"stream", id_}, {"region", request.unregister_shm}});
      }
      return status;
    }
    const v1::ShmRegistration& r = request.register_shm;
    absl::Status status = shm_regions_.Register(r.region(), r.key(), r.byte_size(), *ctx_.engine,
                                                *ctx_.host_budget);
    if (status.ok()) {
      LogInfo("shm_region_registered", {{"stream", id_},
                                        {"peer", peer_},
                                        {"region", r.region()},
                                        {"key", r.key()},
                                        {"bytes", r.byte_size()}});
    } else {
      LogWarning("shm_region_refused", {{"stream", id_},
                                        {"peer", peer_},
                                        {"region", r.region()},
                                        {"key", r.key()},
                                        {"error", status.ToString()}});
    }
    return status;
  }

  // Opt-in, and only for peers on this host.
  absl::Status ShmAllowed() const {
    if (!ctx_.options->shm_ingest.allow) {
      return absl::FailedPreconditionError(
          "shared-memory ingest is off; start histd with --allow_shm_ingest");
    }
    if (!IsLocalPeer(peer_)) {
      return absl::PermissionDeniedError(absl::StrFormat(
          "shared-memory ingest is only for local producers (a Unix socket or loopback); "
          "this stream's peer is %s",
          peer_));
    }
    return absl::OkStatus();
  }

  // Points `message` at its samples in a region of this stream.
  absl::Status ResolveShm(const v1::ShmSamples& shm, IngestPipeline::Message* message) {
    if (message->samples.size() != 0) {
      return absl::InvalidArgumentError(
          "a message carries samples or shm, not both; nothing of it was applied");
    }
    if (absl::Status s = ShmAllowed(); !s.ok()) return s;
    absl::StatusOr<std::shared_ptr<const ShmRegion>> region = shm_regions_.Find(shm.region());
    if (!region.ok()) return region.status();
    absl::StatusOr<size_t> bytes = (*region)->CheckRange(shm.offset(), shm.count(), message->kind);
    if (!bytes.ok()) return bytes.status();
    const size_t limit = ctx_.options->pipeline.staging_buffer_bytes;
    if (*bytes > limit) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "a shared-memory message of %d bytes is larger than --staging_buffer_bytes=%d; "
          "split it (nothing of it was applied)",
          *bytes, limit));
    }
    message->region = *std::move(region);
    message->region_offset = shm.offset();
    message->region_bytes = *bytes;
    return absl::OkStatus();
  }

  // `charge`: what the message counted against the read-ahead when it was read.
  void OnStaged(size_t charge) {
    Actions actions;
    {
      absl::MutexLock lock(&mu_);
      staging_bytes_ -= charge;
      actions = NextActionsLocked();
    }
    Perform(this, actions);
  }

  void OnAck(const std::shared_ptr<PendingAck>& ack, absl::Status status, uint64_t samples) {
    // OK acknowledgements are counted by the pipeline (IngestStats::messages).
    if (!status.ok() && ctx_.metrics != nullptr) ctx_.metrics->ingest_rejected(status.code()).Add();
    Actions actions;
    {
      absl::MutexLock lock(&mu_);
      ack->response.set_code(static_cast<int32_t>(status.code()));
      ack->response.set_message(std::string(status.message()));
      ack->response.set_samples(samples);
      ack->done = true;
      if (status.ok()) {
        ++applied_;
        samples_applied_ += samples;
      } else {
        if (rejected_ == 0) {
          first_rejection_ = absl::StrFormat("sequence %d: %s", ack->response.sequence(),
                                             status.ToString());
        }
        ++rejected_;
      }
      actions = NextActionsLocked();
    }
    Perform(this, actions);
  }

  // Decides what to start next: a write, a read, or both; a finish only alone.
  Actions NextActionsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    Actions a;
    if (finished_) return a;
    while (!writing_ && !pending_.empty() && pending_.front()->done) {
      std::shared_ptr<PendingAck> ack = std::move(pending_.front());
      pending_.pop_front();
      if (write_failed_) {
        if (!ack->response.server_shutting_down()) ++acks_dropped_;  // the notice is no ack
        continue;
      }
      bool own_buffer;
      response_.Clear();  // required: gRPC's serializer asserts an empty (invalid) buffer
      if (!grpc::SerializationTraits<v1::IngestResponse>::Serialize(ack->response, &response_,
                                                                     &own_buffer)
               .ok()) {
        continue;  // cannot happen for a well-formed message; the client sees a gap
      }
      writing_ = true;
      a.write = &response_;
      if (ctx_.metrics != nullptr && !ack->response.server_shutting_down()) {
        ctx_.metrics->ack_latency().Observe(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                std::chrono::steady_clock::now() - ack->received)
                                                .count());
      }
    }
    // Reads pause while the client leaves its acknowledgements unread (they pile up here
    // once gRPC's flow control holds our writes), so a producer that never reads cannot
    // grow the daemon's memory.
    const size_t max_unsent = static_cast<size_t>(ctx_.options->limits.max_unsent_acks_per_stream);
    if (!reads_done_ && staging_bytes_ < ctx_.options->pipeline.stream_read_ahead_bytes &&
        pending_.size() < max_unsent && !read_outstanding_) {
      read_outstanding_ = true;
      a.read = true;
    }
    const bool idle = staging_bytes_ == 0 && !writing_ && pending_.empty();
    if (idle && reads_done_) {
      finished_ = true;
      a.finish = !stopping_ ? grpc::Status::OK
                            : grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                           "histd is shutting down; every message received on "
                                           "this stream was acknowledged");
    }
    return a;
  }

  // Runs outside the lock. Finish is the last thing done: OnDone may delete the reactor after
  // it. With no action decided, `self` is not touched at all: once a callback has released
  // mu_ holding no read, write or finish of its own, another thread may finish the stream and
  // gRPC delete the reactor (a stager's on_staged may come after the message's ack is
  // written). A decided read or write keeps the stream from finishing until gRPC completes it.
  static void Perform(IngestStreamReactor* self, const Actions& a) {
    if (!a.any()) return;
    if (a.write != nullptr) self->StartWrite(a.write);
    if (a.read) self->StartRead(&self->request_);
    if (a.finish) self->Finish(*a.finish);
  }

  IngestService& service_;
  ServiceContext& ctx_;
  const uint64_t id_;
  const std::string peer_;
  grpc::ByteBuffer request_;  // owned by gRPC between StartRead and OnReadDone
  // This stream's shared-memory regions; touched only by OnReadDone (one read at a time).
  ShmRegistry shm_regions_{ctx_.options->shm_ingest.max_regions_per_stream};

  absl::Mutex mu_;
  grpc::ByteBuffer response_ ABSL_GUARDED_BY(mu_);  // the write in progress
  std::deque<std::shared_ptr<PendingAck>> pending_ ABSL_GUARDED_BY(mu_);  // request order
  bool read_outstanding_ ABSL_GUARDED_BY(mu_) = false;
  // Read-ahead charges (kReadAheadMinChargeBytes at least) of the messages with the
  // pipeline, not yet staged.
  size_t staging_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool reads_done_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool write_failed_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t received_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t applied_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t samples_applied_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t rejected_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t acks_dropped_ ABSL_GUARDED_BY(mu_) = 0;  // after a failed write (client gone)
  std::string first_rejection_ ABSL_GUARDED_BY(mu_);
};

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* IngestService::Ingest(
    grpc::CallbackServerContext* context) {
  if (absl::Status s = AuthorizeCall(ctx_, *context, "/histd.v1.Ingest/Ingest"); !s.ok()) {
    return new RefusedStream(ToGrpcStatus(s));
  }
  IngestStreamReactor* reactor = nullptr;
  {
    absl::MutexLock lock(&mu_);
    if (shutting_down_) {
      return new RefusedStream(
          grpc::Status(grpc::StatusCode::UNAVAILABLE, "histd is shutting down"));
    }
    const size_t limit = static_cast<size_t>(ctx_.options->limits.max_concurrent_streams);
    if (streams_.size() >= limit) {
      LogWarning("ingest_stream_refused", {{"peer", context->peer()},
                                           {"open_streams", streams_.size()},
                                           {"max_concurrent_streams", limit}});
      return new RefusedStream(grpc::Status(
          grpc::StatusCode::RESOURCE_EXHAUSTED,
          absl::StrFormat("%d ingest streams are open, --max_concurrent_streams=%d; retry later",
                          streams_.size(), limit)));
    }
    const uint64_t id = next_stream_id_++;
    reactor = new IngestStreamReactor(this, &ctx_, id, context->peer());
    streams_.insert(reactor);
    ctx_.active_streams.store(streams_.size());
    LogInfo("ingest_stream_opened",
            {{"stream", id}, {"peer", context->peer()}, {"open_streams", streams_.size()}});
    // Under the lock, so BeginShutdown cannot finish the stream before its first read is
    // issued. Nothing runs inline here: gRPC binds the stream only once we return it.
    reactor->Begin();
  }
  return reactor;
}

void IngestService::BeginShutdown() {
  std::vector<std::function<void()>> continuations;
  {
    absl::MutexLock lock(&mu_);
    shutting_down_ = true;
    // Each ends once its messages are acknowledged.
    LogInfo("shutdown_finishing_streams", {{"streams", streams_.size()}});
    // A reactor stays registered until its OnDone, which takes mu_: none is deleted here.
    for (IngestStreamReactor* reactor : streams_) {
      if (std::function<void()> next = reactor->BeginStop()) continuations.push_back(next);
    }
  }
  for (const auto& next : continuations) next();
}

void IngestService::WaitForStreams(absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  auto all_finished = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return streams_.empty(); };
  mu_.AwaitWithDeadline(absl::Condition(&all_finished), deadline);
}

void IngestService::Unregister(IngestStreamReactor* reactor) {
  absl::MutexLock lock(&mu_);
  streams_.erase(reactor);
  ctx_.active_streams.store(streams_.size());
}

}  // namespace histd::server
