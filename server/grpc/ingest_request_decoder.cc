#include "server/grpc/ingest_request_decoder.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"

namespace histd::server {
namespace {

// histd.v1.IngestRequest field numbers (proto/histd/v1/ingest.proto).
constexpr uint32_t kSequence = 1;
constexpr uint32_t kHistogram = 2;
constexpr uint32_t kType = 3;
constexpr uint32_t kSamples = 4;
constexpr uint32_t kShm = 5;
constexpr uint32_t kRegisterShm = 6;
constexpr uint32_t kUnregisterShm = 7;

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// Reads forward through a list of slices as one byte string.
class SliceReader {
 public:
  explicit SliceReader(const std::vector<grpc::Slice>& slices) : slices_(slices) {
    for (const grpc::Slice& s : slices_) total_ += s.size();
  }

  size_t offset() const { return offset_; }
  size_t remaining() const { return total_ - offset_; }

  bool ReadByte(uint8_t* byte) {
    while (slice_ < slices_.size() && in_slice_ == slices_[slice_].size()) {
      ++slice_;
      in_slice_ = 0;
    }
    if (slice_ == slices_.size()) return false;
    *byte = slices_[slice_].begin()[in_slice_++];
    ++offset_;
    return true;
  }

  // Base-128 varint of at most max_bytes bytes; the bits above 64 are dropped, as
  // protobuf does (values: 10 bytes; tags and lengths: 5).
  bool ReadVarint(uint64_t* value, int max_bytes = 10) {
    uint64_t result = 0;
    for (int i = 0; i < max_bytes; ++i) {
      uint8_t byte;
      if (!ReadByte(&byte)) return false;
      result |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
      if ((byte & 0x80) == 0) {
        *value = result;
        return true;
      }
    }
    return false;
  }

  bool Skip(size_t n) { return Advance(n, nullptr); }

  bool ReadString(size_t n, std::string* out) {
    out->clear();
    return Advance(n, out);
  }

 private:
  // Moves n bytes forward, appending them to `out` when it is not null.
  bool Advance(size_t n, std::string* out) {
    if (n > remaining()) return false;
    if (out != nullptr) out->reserve(out->size() + n);
    offset_ += n;
    while (n > 0) {
      const size_t here = slices_[slice_].size() - in_slice_;
      const size_t take = n < here ? n : here;
      if (out != nullptr) {
        out->append(reinterpret_cast<const char*>(slices_[slice_].begin()) + in_slice_, take);
      }
      n -= take;
      in_slice_ += take;
      if (in_slice_ == slices_[slice_].size()) {
        ++slice_;
        in_slice_ = 0;
      }
    }
    return true;
  }

  const std::vector<grpc::Slice>& slices_;
  size_t total_ = 0;
  size_t slice_ = 0;
  size_t in_slice_ = 0;
  size_t offset_ = 0;
};

// Keeps the slices a payload points into referenced (gRPC's receive buffers).
class SliceStorage : public PayloadStorage {
 public:
  explicit SliceStorage(std::vector<grpc::Slice> slices) : slices_(std::move(slices)) {}
  size_t piece_count() const override { return slices_.size(); }
  BytePiece piece(size_t i) const override { return {slices_[i].begin(), slices_[i].size()}; }

 private:
  std::vector<grpc::Slice> slices_;
};

absl::Status Malformed(size_t offset, const char* what) {
  return absl::InvalidArgumentError(absl::StrFormat(
      "malformed histd.v1.IngestRequest at byte %d: %s; nothing of this message was applied",
      offset, what));
}

}  // namespace

absl::StatusOr<DecodedIngestRequest> DecodeIngestRequest(const grpc::ByteBuffer& request) {
  std::vector<grpc::Slice> slices;
  // A buffer that holds nothing (not Valid) is the empty message.
  if (request.Valid() && !request.Dump(&slices).ok()) {
    return absl::InternalError("cannot read the received ingest message");
  }
  DecodedIngestRequest out;
  SliceReader reader(slices);
  size_t samples_offset = 0, samples_size = 0;
  while (reader.remaining() > 0) {
    const size_t field_start = reader.offset();
    // A tag is a 32-bit varint of at most 5 bytes; protobuf drops the bits above 32.
    uint64_t tag;
    if (!reader.ReadVarint(&tag, 5)) return Malformed(field_start, "bad field tag");
    const uint32_t number = static_cast<uint32_t>(tag) >> 3;
    const uint32_t wire = static_cast<uint32_t>(tag & 7);
    if (number == 0) return Malformed(field_start, "bad field number");
    switch (wire) {
      case kVarint: {
        uint64_t value;
        if (!reader.ReadVarint(&value)) return Malformed(field_start, "truncated varint");
        if (number == kSequence) out.sequence = value;
        if (number == kType) out.type = static_cast<int32_t>(static_cast<uint32_t>(value));
        break;
      }
      case kFixed64:
      case kFixed32:
        if (!reader.Skip(wire == kFixed64 ? 8 : 4)) {
          return Malformed(field_start, "truncated fixed-width field");
        }
        break;
      case kLengthDelimited: {
        // A length is a varint of at most 5 bytes below 2^31 (protobuf's ReadSize).
        uint64_t length;
        if (!reader.ReadVarint(&length, 5) || length >= (uint64_t{1} << 31)) {
          return Malformed(field_start, "bad or truncated length");
        }
        if (length > reader.remaining()) {
          return Malformed(field_start, "field longer than the message");
        }
        if (number == kHistogram) {
          reader.ReadString(length, &out.histogram);
        } else if (number == kUnregisterShm) {
          reader.ReadString(length, &out.unregister_shm);
        } else if (number == kShm || number == kRegisterShm) {
          // Small messages (a name, a key, numbers): parsed by protobuf, merged as it
          // merges a repeated field.
          std::string bytes;
          reader.ReadString(length, &bytes);
          const bool parsed = number == kShm ? out.shm.MergeFromString(bytes)
                                             : out.register_shm.MergeFromString(bytes);
          if (!parsed) return Malformed(field_start, "unparsable shared-memory field");
          (number == kShm ? out.has_shm : out.has_register_shm) = true;
        } else {
          if (number == kSamples) {
            samples_offset = reader.offset();
            samples_size = length;
          }
          reader.Skip(length);
        }
        break;
      }
      default:
        return Malformed(field_start, "unsupported wire type (groups or 6/7)");
    }
  }
  out.samples = PayloadFromSlices(std::move(slices), samples_offset, samples_size);
  return out;
}

SamplePayload PayloadFromSlices(std::vector<grpc::Slice> slices, size_t offset, size_t size) {
  return SamplePayload(std::make_unique<SliceStorage>(std::move(slices)), offset, size);
}

}  // namespace histd::server
