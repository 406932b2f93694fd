#include "client/ingest_stream.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "client/grpc_status.h"

namespace histd::client {

absl::Status IngestSummary::OverallStatus() const {
  if (!stream_status.ok()) return stream_status;
  if (unacknowledged > 0) {
    return absl::UnavailableError(
        absl::StrCat(unacknowledged, " messages were never acknowledged"));
  }
  if (!rejected.empty()) {
    const IngestAck& first = rejected.front();
    return absl::Status(
        first.status.code(),
        absl::StrCat(counters.messages_rejected, " of ", counters.messages_sent,
                     " messages rejected; first: message ", first.sequence, " (histogram '",
                     first.histogram, "', samples ", first.first_sample, "..",
                     first.first_sample + first.samples, "): ", first.status.message()));
  }
  if (counters.messages_rejected > 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(counters.messages_rejected, " messages rejected"));
  }
  return absl::OkStatus();
}

IngestStream::IngestStream(histd::v1::Ingest::Stub* stub, IngestStreamOptions options)
    : options_(std::move(options)), batcher_(options_.max_message_bytes) {
  stream_ = stub->Ingest(&context_);
  reader_ = std::thread([this] { ReaderLoop(); });
}

IngestStream::~IngestStream() {
  bool finished;
  {
    absl::MutexLock lock(&write_mu_);
    finished = finished_;
    finished_ = true;
  }
  if (!finished) {
    context_.TryCancel();
    if (reader_.joinable()) reader_.join();
    stream_->Finish();  // CANCELLED; releases the call
  }
}

void IngestStream::Cancel() { context_.TryCancel(); }

IngestCounters IngestStream::counters() const {
  absl::MutexLock lock(&mu_);
  return counters_;
}

absl::Status IngestStream::UsableLocked() const {
  if (finished_) return absl::FailedPreconditionError("ingest stream already finished");
  if (write_failed_) {
    return absl::UnavailableError("ingest stream is broken; Finish() returns its status");
  }
  return absl::OkStatus();
}

absl::Status IngestStream::Send(const std::string& histogram, histd::v1::SampleType type,
                                absl::string_view packed_samples) {
  absl::MutexLock lock(&write_mu_);
  absl::Status usable = UsableLocked();
  if (!usable.ok()) return usable;
  return batcher_.Add(histogram, type, packed_samples, [this](SampleBatch&& batch) {
    write_mu_.AssertHeld();
    return WriteBatch(std::move(batch));
  });
}

absl::Status IngestStream::SendIndices(const std::string& histogram,
                                       absl::Span<const uint32_t> indices) {
  return Send(histogram, histd::v1::SAMPLE_TYPE_BIN_INDEX_U32,
              absl::string_view(reinterpret_cast<const char*>(indices.data()),
                                indices.size() * sizeof(uint32_t)));
}

absl::Status IngestStream::SendXY(const std::string& histogram, absl::Span<const float> xy) {
  if (xy.size() % 2 != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("x/y samples need an even number of floats, got ", xy.size()));
  }
  return Send(histogram, histd::v1::SAMPLE_TYPE_XY_F32,
              absl::string_view(reinterpret_cast<const char*>(xy.data()),
                                xy.size() * sizeof(float)));
}

absl::Status IngestStream::FlushLocked() {
  absl::Status usable = UsableLocked();
  if (!usable.ok()) return usable;
  return batcher_.Flush([this](SampleBatch&& batch) {
    write_mu_.AssertHeld();
    return WriteBatch(std::move(batch));
  });
}

absl::Status IngestStream::Flush() {
  absl::MutexLock lock(&write_mu_);
  return FlushLocked();
}

absl::Status IngestStream::WriteBatch(SampleBatch&& batch) {
  histd::v1::IngestRequest request;
  request.set_histogram(batch.histogram);
  request.set_type(batch.type);
  const uint64_t bytes = batch.payload.size();
  request.set_samples(std::move(batch.payload));
  InFlight entry{0, std::move(batch.histogram), batch.type, batch.first_sample, batch.samples};
  return WriteRequest(std::move(request), std::move(entry), bytes).status();
}

absl::StatusOr<uint64_t> IngestStream::WriteRequest(histd::v1::IngestRequest request,
                                                    InFlight entry, uint64_t bytes) {
  const uint64_t sequence = next_sequence_;
  entry.sequence = sequence;
  const uint64_t samples = entry.samples;
  const bool counted = !entry.control;
  {
    absl::MutexLock lock(&mu_);
    auto window_open_or_done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return reader_done_ || server_shutting_down_ ||
             in_flight_.size() < options_.max_in_flight_messages;
    };
    mu_.Await(absl::Condition(&window_open_or_done));
    if (server_shutting_down_) {
      write_failed_ = true;
      return absl::UnavailableError(
          "histd is shutting down; the stream is half-closed, Finish() returns its status");
    }
    if (reader_done_) {
      write_failed_ = true;
      return absl::UnavailableError("ingest stream ended; Finish() returns its status");
    }
    in_flight_.push_back(std::move(entry));
    if (counted) {
      counters_.messages_sent += 1;
      counters_.samples_sent += samples;
      counters_.bytes_sent += bytes;
    }
  }
  request.set_sequence(sequence);
  bool written;
  {
    absl::MutexLock lock(&stream_write_mu_);
    written = !half_closed_ && stream_->Write(request);
  }
  if (!written) {
    // The stream is closed: this message never left, so it is not counted as sent.
    write_failed_ = true;
    absl::MutexLock lock(&mu_);
    for (auto it = in_flight_.rbegin(); it != in_flight_.rend(); ++it) {
      if (it->sequence == sequence) {
        in_flight_.erase(std::next(it).base());
        if (counted) {
          counters_.messages_sent -= 1;
          counters_.samples_sent -= samples;
          counters_.bytes_sent -= bytes;
        }
        break;
      }
    }
    return absl::UnavailableError("ingest stream closed while writing; Finish() returns its status");
  }
  next_sequence_ += 1;
  return sequence;
}

absl::Status IngestStream::Control(histd::v1::IngestRequest request) {
  absl::StatusOr<uint64_t> sequence;
  {
    absl::MutexLock lock(&write_mu_);
    absl::Status usable = UsableLocked();
    if (!usable.ok()) return usable;
    InFlight entry{0, "", histd::v1::SAMPLE_TYPE_UNSPECIFIED, 0, 0, /*control=*/true};
    sequence = WriteRequest(std::move(request), std::move(entry), 0);
    if (!sequence.ok()) return sequence.status();
  }
  absl::MutexLock lock(&mu_);
  auto answered_or_done = [this, seq = *sequence]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return reader_done_ || control_answers_.count(seq) != 0;
  };
  mu_.Await(absl::Condition(&answered_or_done));
  auto it = control_answers_.find(*sequence);
  if (it == control_answers_.end()) {
    return absl::UnavailableError("ingest stream ended before the server answered");
  }
  absl::Status answer = std::move(it->second);
  control_answers_.erase(it);
  return answer;
}

absl::Status IngestStream::RegisterShmRegion(const std::string& region, const std::string& key,
                                             uint64_t byte_size) {
  histd::v1::IngestRequest request;
  request.mutable_register_shm()->set_region(region);
  request.mutable_register_shm()->set_key(key);
  request.mutable_register_shm()->set_byte_size(byte_size);
  return Control(std::move(request));
}

absl::Status IngestStream::UnregisterShmRegion(const std::string& region) {
  histd::v1::IngestRequest request;
  request.set_unregister_shm(region);
  return Control(std::move(request));
}

absl::StatusOr<uint64_t> IngestStream::SendShm(const std::string& histogram,
                                               histd::v1::SampleType type,
                                               const std::string& region, uint64_t offset,
                                               uint64_t count) {
  absl::MutexLock lock(&write_mu_);
  absl::Status usable = UsableLocked();
  if (!usable.ok()) return usable;
  histd::v1::IngestRequest request;
  request.set_histogram(histogram);
  request.set_type(type);
  request.mutable_shm()->set_region(region);
  request.mutable_shm()->set_offset(offset);
  request.mutable_shm()->set_count(count);
  const uint64_t bytes = count * (type == histd::v1::SAMPLE_TYPE_XY_F32 ? 8 : 4);
  // first_sample: shm messages are numbered apart from the batcher's payload messages.
  InFlight entry{0, histogram, type, 0, count};
  return WriteRequest(std::move(request), std::move(entry), bytes);
}

uint64_t IngestStream::acknowledged_through() const {
  absl::MutexLock lock(&mu_);
  return acknowledged_through_;
}

absl::Status IngestStream::WaitForAck(uint64_t sequence) {
  absl::MutexLock lock(&mu_);
  auto acked_or_done = [this, sequence]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return reader_done_ || acknowledged_through_ >= sequence;
  };
  mu_.Await(absl::Condition(&acked_or_done));
  if (acknowledged_through_ < sequence) {
    return absl::UnavailableError(absl::StrCat("ingest stream ended before message ", sequence,
                                               " was acknowledged"));
  }
  return absl::OkStatus();
}

absl::Status IngestStream::WaitForAcks() {
  absl::MutexLock lock(&write_mu_);
  absl::Status flushed = FlushLocked();
  if (!flushed.ok()) return flushed;
  absl::MutexLock state_lock(&mu_);
  auto drained_or_done = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return reader_done_ || in_flight_.empty();
  };
  mu_.Await(absl::Condition(&drained_or_done));
  if (!in_flight_.empty()) {
    return absl::UnavailableError(absl::StrCat("ingest stream ended with ", in_flight_.size(),
                                               " messages unacknowledged"));
  }
  return absl::OkStatus();
}

void IngestStream::ProtocolError(const std::string& message) {
  {
    absl::MutexLock lock(&mu_);
    if (protocol_error_.ok()) protocol_error_ = absl::InternalError(message);
  }
  context_.TryCancel();
}

bool IngestStream::HalfClose() {
  // A producer inside stream_->Write finishes it first (the server keeps reading until the
  // half-close), so this never waits on the reader thread.
  absl::MutexLock lock(&stream_write_mu_);
  if (half_closed_) return false;
  half_closed_ = true;
  stream_->WritesDone();  // harmless on a broken stream
  return true;
}

void IngestStream::ReaderLoop() {
  histd::v1::IngestResponse response;
  while (stream_->Read(&response)) {
    if (response.server_shutting_down()) {
      {
        absl::MutexLock lock(&mu_);
        server_shutting_down_ = true;  // wakes a producer waiting for the window
      }
      HalfClose();
      continue;
    }
    IngestAck ack;
    std::string violation;
    {
      absl::MutexLock lock(&mu_);
      if (in_flight_.empty()) {
        violation = absl::StrCat("server acknowledged sequence ", response.sequence(),
                                 " with no message in flight");
      } else if (in_flight_.front().sequence != response.sequence()) {
        violation = absl::StrCat("server acknowledged sequence ", response.sequence(),
                                 " but the oldest message in flight is ",
                                 in_flight_.front().sequence);
      } else {
        InFlight done = std::move(in_flight_.front());
        in_flight_.pop_front();
        acknowledged_through_ = done.sequence;
        if (done.control) {
          control_answers_[done.sequence] = FromRpcCode(response.code(), response.message());
          continue;
        }
        ack.sequence = done.sequence;
        ack.histogram = std::move(done.histogram);
        ack.type = done.type;
        ack.first_sample = done.first_sample;
        ack.samples = done.samples;
        ack.status = FromRpcCode(response.code(), response.message());
        if (ack.status.ok()) {
          counters_.messages_acked += 1;
          counters_.samples_acked += ack.samples;
        } else {
          counters_.messages_rejected += 1;
          counters_.samples_rejected += ack.samples;
          if (rejected_.size() < options_.max_retained_errors) {
            rejected_.push_back(ack);
          } else {
            rejected_not_retained_ += 1;
          }
        }
      }
    }
    if (!violation.empty()) {
      ProtocolError(violation);
      break;
    }
    if (options_.on_ack) options_.on_ack(ack);
  }
  absl::MutexLock lock(&mu_);
  reader_done_ = true;
}

IngestSummary IngestStream::Finish() {
  IngestSummary summary;
  absl::MutexLock lock(&write_mu_);
  if (finished_) {
    summary.stream_status = absl::FailedPreconditionError("ingest stream already finished");
    return summary;
  }
  absl::Status flushed = FlushLocked();
  finished_ = true;
  HalfClose();
  reader_.join();
  const grpc::Status final_status = stream_->Finish();
  absl::MutexLock state_lock(&mu_);
  summary.stream_status =
      !protocol_error_.ok() ? protocol_error_ : FromGrpcStatus(final_status);
  if (summary.stream_status.ok() && !flushed.ok()) summary.stream_status = flushed;
  summary.counters = counters_;
  summary.rejected = rejected_;
  summary.rejected_not_retained = rejected_not_retained_;
  summary.unacknowledged = in_flight_.size();
  return summary;
}

}  // namespace histd::client
