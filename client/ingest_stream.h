// IngestStream: one long-lived histd.v1.Ingest bidi stream for one producer.
//
// Contract:
//  - Send() batches samples client-side (SampleBatcher) into messages of at most
//    max_message_bytes payload bytes per (histogram, sample type) and writes each full
//    message; Flush() writes the partial ones. Messages are numbered 1, 2, 3, ... on the
//    stream, whatever their histogram.
//  - Every message gets exactly one acknowledgement from the server, in order. An OK ack
//    means the message is applied; a rejected one carries the server's status (nothing of
//    that message is applied). Acks are counted (counters()), passed to on_ack, and the
//    rejected ones are kept (up to max_retained_errors) for Finish().
//  - Nothing is retried or re-sent, ever: a rejected message or a broken stream is
//    reported, and the caller decides.
//  - Bounded memory: at most max_in_flight_messages written but unacknowledged messages;
//    Send()/Flush() block while the window is full. Plus one partial message per key.
//  - Server shutdown: on the server's shutdown notice (see histd.v1.IngestResponse) the
//    stream half-closes itself as soon as no Send is writing; from then on Send/Flush return
//    UNAVAILABLE, messages that crossed the notice are acknowledged UNAVAILABLE, and every
//    ack is read before the connection closes. Samples still batched are not sent.
//  - Finish() flushes, half-closes, waits for every ack (or the end of the stream) and
//    returns the stream's final status, the counters and the rejected messages.
//    Messages left without an ack when the stream ended are counted as unacknowledged:
//    their fate is unknown.
//
// Thread safety: Send, SendIndices, SendXY, Flush, WaitForAcks and Finish may be called from
// any thread; they serialize on an internal mutex (so one producer thread at a time makes
// progress). counters() and Cancel() may be called at any time from any thread. on_ack runs
// on the stream's reader thread with no lock held; it must not call Send/Flush/Finish (the
// window may be waiting for that very thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "client/sample_batcher.h"
#include "histd/v1/ingest.grpc.pb.h"

namespace histd::client {

// The outcome of one message.
struct IngestAck {
  uint64_t sequence = 0;
  std::string histogram;
  histd::v1::SampleType type = histd::v1::SAMPLE_TYPE_UNSPECIFIED;
  // Position of the message's first sample among the samples of this histogram and type
  // sent on this stream (0-based), and how many samples the message carried.
  uint64_t first_sample = 0;
  uint64_t samples = 0;
  absl::Status status;
};

struct IngestCounters {
  uint64_t messages_sent = 0;
  uint64_t samples_sent = 0;
  uint64_t bytes_sent = 0;
  uint64_t messages_acked = 0;  // applied
  uint64_t samples_acked = 0;
  uint64_t messages_rejected = 0;
  uint64_t samples_rejected = 0;

  uint64_t messages_in_flight() const {
    return messages_sent - messages_acked - messages_rejected;
  }
};

struct IngestStreamOptions {
  size_t max_message_bytes = 1 << 20;
  size_t max_in_flight_messages = 32;
  // Called once per ack, on the reader thread.
  std::function<void(const IngestAck&)> on_ack;
  size_t max_retained_errors = 1000;
};

struct IngestSummary {
  // The stream's final status (OK when the server closed it normally).
  absl::Status stream_status;
  IngestCounters counters;
  // Rejected messages, in sequence order (at most max_retained_errors; the rest counted).
  std::vector<IngestAck> rejected;
  uint64_t rejected_not_retained = 0;
  // Messages written whose ack never came (stream broke or was cancelled).
  uint64_t unacknowledged = 0;

  // OK when the stream ended OK and every message was applied; else the first problem.
  absl::Status OverallStatus() const;
};

class IngestStream {
 public:
  // Starts the call and the reader thread. stub must outlive the stream.
  IngestStream(histd::v1::Ingest::Stub* stub, IngestStreamOptions options);
  // Cancels the call if Finish() was not called, and joins the reader thread.
  ~IngestStream();
  IngestStream(const IngestStream&) = delete;
  IngestStream& operator=(const IngestStream&) = delete;

  // Returns INVALID_ARGUMENT for a malformed call (nothing added), FAILED_PRECONDITION
  // after Finish(), UNAVAILABLE once the stream is broken (Finish() then gives the real
  // status). Rejections of earlier messages do not fail Send.
  absl::Status Send(const std::string& histogram, histd::v1::SampleType type,
                    absl::string_view packed_samples);
  absl::Status SendIndices(const std::string& histogram, absl::Span<const uint32_t> indices);
  // xy holds x0, y0, x1, y1, ...; its size must be even.
  absl::Status SendXY(const std::string& histogram, absl::Span<const float> xy);

  // Zero-copy local ingest (docs/shm-ingest.md; ShmRing in client/shm_ring.h does all of
  // it). Registers the POSIX shared-memory object `key` (its first byte_size bytes) as
  // `region` on this stream and waits for the server's answer (its status). Registrations
  // are not counted as messages.
  absl::Status RegisterShmRegion(const std::string& region, const std::string& key,
                                 uint64_t byte_size);
  // Unregisters `region` and waits for the answer; messages in flight that use it complete.
  absl::Status UnregisterShmRegion(const std::string& region);
  // Sends one message of `count` samples at byte `offset` of `region`, acknowledged and
  // counted like any other. The samples must stay unchanged until that acknowledgement
  // (WaitForAck, acknowledged_through, on_ack). Returns the message's sequence number.
  absl::StatusOr<uint64_t> SendShm(const std::string& histogram, histd::v1::SampleType type,
                                   const std::string& region, uint64_t offset, uint64_t count);
  // Every message up to `sequence` has its acknowledgement (acks come in order). 0: none.
  uint64_t acknowledged_through() const;
  // Blocks until acknowledged_through() >= sequence; UNAVAILABLE if the stream ends first.
  absl::Status WaitForAck(uint64_t sequence);

  // Writes every partial message.
  absl::Status Flush();
  // Flushes, then blocks until every written message is acknowledged (stream stays open).
  absl::Status WaitForAcks();

  IngestSummary Finish();
  // Cancels the call; blocked and later calls return soon with an error.
  void Cancel();

  IngestCounters counters() const;

 private:
  struct InFlight {
    uint64_t sequence;
    std::string histogram;
    histd::v1::SampleType type;
    uint64_t first_sample;
    uint64_t samples;
    bool control = false;  // a region registration or unregistration: not counted
  };

  absl::Status WriteBatch(SampleBatch&& batch) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // Writes `request` (its sequence set here) within the window; returns its sequence.
  absl::StatusOr<uint64_t> WriteRequest(histd::v1::IngestRequest request, InFlight entry,
                                        uint64_t bytes) ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  // Writes a registration or unregistration and waits for its answer.
  absl::Status Control(histd::v1::IngestRequest request);
  absl::Status FlushLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  absl::Status UsableLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(write_mu_);
  void ReaderLoop();
  // Half-closes the call once (WritesDone); false if it was already half-closed.
  bool HalfClose() ABSL_LOCKS_EXCLUDED(stream_write_mu_);
  // Records a protocol violation by the server and cancels the call.
  void ProtocolError(const std::string& message) ABSL_LOCKS_EXCLUDED(mu_);

  const IngestStreamOptions options_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<histd::v1::IngestRequest, histd::v1::IngestResponse>>
      stream_;
  std::thread reader_;

  // Producer side: batching and writing, one caller at a time.
  absl::Mutex write_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  SampleBatcher batcher_ ABSL_GUARDED_BY(write_mu_);
  uint64_t next_sequence_ ABSL_GUARDED_BY(write_mu_) = 1;
  bool write_failed_ ABSL_GUARDED_BY(write_mu_) = false;
  bool finished_ ABSL_GUARDED_BY(write_mu_) = false;

  // Serializes stream_->Write and WritesDone between a producer and the reader thread, which
  // half-closes on the server's shutdown notice. Taken after write_mu_, never with mu_.
  absl::Mutex stream_write_mu_ ABSL_ACQUIRED_AFTER(write_mu_);
  bool half_closed_ ABSL_GUARDED_BY(stream_write_mu_) = false;

  // Shared with the reader thread.
  mutable absl::Mutex mu_;
  std::deque<InFlight> in_flight_ ABSL_GUARDED_BY(mu_);
  IngestCounters counters_ ABSL_GUARDED_BY(mu_);
  std::vector<IngestAck> rejected_ ABSL_GUARDED_BY(mu_);
  uint64_t rejected_not_retained_ ABSL_GUARDED_BY(mu_) = 0;
  bool reader_done_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t acknowledged_through_ ABSL_GUARDED_BY(mu_) = 0;
  // Answers of registrations and unregistrations, until their caller takes them.
  std::map<uint64_t, absl::Status> control_answers_ ABSL_GUARDED_BY(mu_);
  bool server_shutting_down_ ABSL_GUARDED_BY(mu_) = false;  // the notice arrived
  absl::Status protocol_error_ ABSL_GUARDED_BY(mu_);
};

}  // namespace histd::client
