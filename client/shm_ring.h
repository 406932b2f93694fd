// ShmRing: zero-copy local ingest through one shared-memory region (docs/shm-ingest.md).
//
// Create() makes a POSIX shared-memory object (mode 0600, a fresh name), maps it, registers
// it on an IngestStream and unlinks its name at once: the mappings keep the memory, and a
// producer that dies leaves nothing behind. The ring then hands out its space in order:
// Reserve() gives the next `bytes` (waiting for acknowledgements to free space), the caller
// writes samples there, and Commit() sends one message naming that range; the range is
// reused once the server has acknowledged the message. Write() is Reserve + copy + Commit.
//
// Contract: at most one reservation is open at a time; a message is at most capacity()
// bytes and at most the server's --staging_buffer_bytes. The ring must not outlive its
// stream. The region is unregistered when the stream ends.
// Thread safety: one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "client/ingest_stream.h"
#include "histd/v1/ingest.pb.h"

namespace histd::client {

class ShmRing {
 public:
  static absl::StatusOr<std::unique_ptr<ShmRing>> Create(IngestStream* stream, size_t bytes,
                                                         std::string region = "ring");
  ~ShmRing();
  ShmRing(const ShmRing&) = delete;
  ShmRing& operator=(const ShmRing&) = delete;

  size_t capacity() const { return size_; }
  const std::string& region() const { return region_; }

  // The next `bytes` of the ring (a multiple of 8 from its start), once no unacknowledged
  // message uses them. INVALID_ARGUMENT when bytes > capacity(); UNAVAILABLE when the
  // stream ends while waiting.
  absl::StatusOr<absl::Span<uint8_t>> Reserve(size_t bytes);
  // Sends the reserved bytes as one message of `type` samples for `histogram`.
  absl::Status Commit(const std::string& histogram, histd::v1::SampleType type);
  // Reserve, copy `packed` in, Commit.
  absl::Status Write(const std::string& histogram, histd::v1::SampleType type,
                     absl::string_view packed);

 private:
  struct Range {
    uint64_t sequence;
    size_t begin, end;
  };
  ShmRing(IngestStream* stream, uint8_t* data, size_t size, std::string region)
      : stream_(stream), data_(data), size_(size), region_(std::move(region)) {}

  IngestStream* const stream_;
  uint8_t* const data_;
  const size_t size_;
  const std::string region_;
  std::deque<Range> in_flight_;  // oldest first
  size_t head_ = 0;              // where the next reservation starts looking
  size_t reserved_begin_ = 0, reserved_bytes_ = 0;
  bool reserved_ = false;
};

}  // namespace histd::client
