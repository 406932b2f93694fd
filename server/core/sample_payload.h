// The packed samples of one ingest message, read in place where they arrived.
//
// A payload is the byte range [0, size()) of one or more contiguous pieces of memory that
// it keeps alive through a PayloadStorage: the buffers the transport received the message
// in (the gRPC ingest handler decodes requests without copying their samples, see
// server/grpc/ingest_request_decoder.h) or one owned string. A sample may straddle two
// pieces; readers go through ForEachSpan or CopyTo.
//
// Move-only; the bytes never move or change while the payload lives. Thread safety: const
// methods may run concurrently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace histd::server {

// A contiguous piece of memory owned by a PayloadStorage.
struct BytePiece {
  const uint8_t* data;
  size_t size;
};

// Owns the memory a payload's pieces point into, in order; the transport derives its own
// (e.g. one holding references to gRPC slices). Its memory must not move or change while it
// lives.
class PayloadStorage {
 public:
  virtual ~PayloadStorage() = default;
  virtual size_t piece_count() const = 0;
  virtual BytePiece piece(size_t i) const = 0;
};

class SamplePayload {
 public:
  SamplePayload() = default;
  explicit SamplePayload(std::string bytes);
  // The bytes [offset, offset + size) of `storage`'s pieces laid end to end. Requires that
  // range to lie inside them.
  SamplePayload(std::unique_ptr<PayloadStorage> storage, size_t offset, size_t size);

  SamplePayload(SamplePayload&&) = default;
  SamplePayload& operator=(SamplePayload&&) = default;
  SamplePayload(const SamplePayload&) = delete;
  SamplePayload& operator=(const SamplePayload&) = delete;

  size_t size() const { return size_; }

  // Calls visit(const uint8_t* data, size_t n) for each contiguous piece of the range
  // [offset, offset + bytes), in order, until visit returns false. Requires
  // offset + bytes <= size().
  template <typename Visit>
  void ForEachSpan(size_t offset, size_t bytes, Visit&& visit) const {
    for (const Span& span : spans_) {
      if (bytes == 0) return;
      if (offset >= span.size) {
        offset -= span.size;
        continue;
      }
      const size_t n = span.size - offset < bytes ? span.size - offset : bytes;
      if (!visit(span.data + offset, n)) return;
      bytes -= n;
      offset = 0;
    }
  }

  // Copies the range [offset, offset + bytes) to dst. Requires offset + bytes <= size().
  void CopyTo(size_t offset, size_t bytes, uint8_t* dst) const;

  // All bytes in one string (tests and diagnostics; ingest never calls it).
  std::string ToString() const;

  // Spans the bytes lie in (1 for an owned string).
  size_t span_count() const { return spans_.size(); }

 private:
  using Span = BytePiece;

  std::unique_ptr<PayloadStorage> storage_;  // on the heap: its bytes stay put when moved
  std::vector<Span> spans_;                  // the payload in order; no empty span
  size_t size_ = 0;
};

}  // namespace histd::server
