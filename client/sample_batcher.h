// SampleBatcher: cuts the samples a producer sends into ingest messages of at most
// max_message_bytes payload bytes, one pending message per (histogram, sample type).
//
// Contract: Add() appends packed little-endian samples (4 bytes per bin index, 8 per x/y
// pair) and emits every message that becomes full; a message's payload is the largest
// whole number of samples that fits in max_message_bytes (at least one sample). Flush()
// emits every partial message. Samples of one histogram and type leave in the order they
// were added; nothing is dropped or duplicated. A batch carries first_sample: how many
// samples of that histogram and type were emitted before it, so a per-message error can be
// mapped back to a position in the producer's input. Memory: at most one partial message
// per (histogram, type) key.
//
// Thread safety: none; IngestStream serializes calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "histd/v1/ingest.pb.h"

namespace histd::client {

struct SampleBatch {
  std::string histogram;
  histd::v1::SampleType type = histd::v1::SAMPLE_TYPE_UNSPECIFIED;
  uint64_t first_sample = 0;
  uint64_t samples = 0;
  std::string payload;  // samples * SampleTypeBytes(type) bytes
};

// 4 for bin indices, 8 for x/y pairs, 0 for anything else.
size_t SampleTypeBytes(histd::v1::SampleType type);

class SampleBatcher {
 public:
  // Receives each finished message; a non-OK status stops Add()/Flush() and is returned.
  using EmitFn = std::function<absl::Status(SampleBatch&&)>;

  explicit SampleBatcher(size_t max_message_bytes);

  // INVALID_ARGUMENT when type is unspecified or packed.size() is not a multiple of the
  // sample size; nothing is added then.
  absl::Status Add(const std::string& histogram, histd::v1::SampleType type,
                   absl::string_view packed, const EmitFn& emit);
  absl::Status Flush(const EmitFn& emit);

  size_t pending_bytes() const { return pending_bytes_; }
  size_t max_message_bytes() const { return max_message_bytes_; }

 private:
  struct Pending {
    uint64_t emitted_samples = 0;  // samples of this key already emitted
    std::string payload;
  };
  using Key = std::pair<std::string, int>;

  // Moves the pending payload of key out as a batch (payload may be empty: then no-op).
  absl::Status EmitPending(const Key& key, Pending& pending, size_t sample_bytes,
                           const EmitFn& emit);

  size_t max_message_bytes_;
  size_t pending_bytes_ = 0;
  std::map<Key, Pending> pending_;
};

}  // namespace histd::client
