#include "client/sample_batcher.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace histd::client {

size_t SampleTypeBytes(histd::v1::SampleType type) {
  switch (type) {
    case histd::v1::SAMPLE_TYPE_BIN_INDEX_U32: return 4;
    case histd::v1::SAMPLE_TYPE_XY_F32: return 8;
    default: return 0;
  }
}

SampleBatcher::SampleBatcher(size_t max_message_bytes) : max_message_bytes_(max_message_bytes) {}

absl::Status SampleBatcher::EmitPending(const Key& key, Pending& pending, size_t sample_bytes,
                                        const EmitFn& emit) {
  if (pending.payload.empty()) return absl::OkStatus();
  SampleBatch batch;
  batch.histogram = key.first;
  batch.type = static_cast<histd::v1::SampleType>(key.second);
  batch.first_sample = pending.emitted_samples;
  batch.samples = pending.payload.size() / sample_bytes;
  batch.payload = std::move(pending.payload);
  pending.payload.clear();
  pending_bytes_ -= batch.payload.size();
  pending.emitted_samples += batch.samples;
  return emit(std::move(batch));
}

absl::Status SampleBatcher::Add(const std::string& histogram, histd::v1::SampleType type,
                                absl::string_view packed, const EmitFn& emit) {
  const size_t sample_bytes = SampleTypeBytes(type);
  if (sample_bytes == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown sample type ", static_cast<int>(type)));
  }
  if (packed.size() % sample_bytes != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(packed.size(), " bytes of samples is not a multiple of the sample size ",
                     sample_bytes));
  }
  // The largest whole number of samples per message, at least one.
  const size_t message_bytes = std::max(sample_bytes, max_message_bytes_ / sample_bytes * sample_bytes);
  const Key key(histogram, static_cast<int>(type));
  Pending& pending = pending_[key];
  while (!packed.empty()) {
    const size_t take = std::min(packed.size(), message_bytes - pending.payload.size());
    if (pending.payload.empty() && take == message_bytes) {
      // A whole message straight from the input: one copy, into the batch.
      SampleBatch batch;
      batch.histogram = histogram;
      batch.type = type;
      batch.first_sample = pending.emitted_samples;
      batch.samples = take / sample_bytes;
      batch.payload.assign(packed.data(), take);
      pending.emitted_samples += batch.samples;
      packed.remove_prefix(take);
      absl::Status status = emit(std::move(batch));
      if (!status.ok()) return status;
      continue;
    }
    if (pending.payload.empty()) pending.payload.reserve(message_bytes);
    pending.payload.append(packed.data(), take);
    pending_bytes_ += take;
    packed.remove_prefix(take);
    if (pending.payload.size() == message_bytes) {
      absl::Status status = EmitPending(key, pending, sample_bytes, emit);
      if (!status.ok()) return status;
    }
  }
  return absl::OkStatus();
}

absl::Status SampleBatcher::Flush(const EmitFn& emit) {
  for (auto& [key, pending] : pending_) {
    const size_t sample_bytes = SampleTypeBytes(static_cast<histd::v1::SampleType>(key.second));
    absl::Status status = EmitPending(key, pending, sample_bytes, emit);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace histd::client
