#include "server/ingest_validation.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_format.h"

namespace histd::server {
namespace {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the wire format is little-endian and copied as is");

const char* KindName(SampleKind kind) {
  return kind == SampleKind::kBinIndex ? "SAMPLE_TYPE_BIN_INDEX_U32" : "SAMPLE_TYPE_XY_F32";
}

absl::Status CopyBinIndices(const HistogramSpec& spec, const uint8_t* src, size_t count,
                            uint8_t* dst) {
  const uint64_t bins = spec.shape.bins();
  uint32_t largest = 0;
  if (dst != nullptr) {
    for (size_t i = 0; i < count; ++i) {
      uint32_t v;
      std::memcpy(&v, src + 4 * i, 4);
      std::memcpy(dst + 4 * i, &v, 4);
      largest = v > largest ? v : largest;
    }
  } else {
    for (size_t i = 0; i < count; ++i) {
      uint32_t v;
      std::memcpy(&v, src + 4 * i, 4);
      largest = v > largest ? v : largest;
    }
  }
  if (count == 0 || largest < bins) return absl::OkStatus();
  for (size_t i = 0; i < count; ++i) {  // the rare path: find the first offender
    uint32_t v;
    std::memcpy(&v, src + 4 * i, 4);
    if (v >= bins) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "sample %d: bin index %d is out of range; histogram '%s' has %d bins (%d x %d), "
          "valid indices 0..%d; nothing of this message was applied",
          i, v, spec.name, bins, spec.shape.rows, spec.shape.cols, bins - 1));
    }
  }
  return absl::OkStatus();
}

absl::Status CopyCoordinates(const HistogramSpec& spec, const uint8_t* src, size_t count,
                             uint8_t* dst) {
  constexpr uint32_t kExponent = 0x7f800000u;  // all ones: inf or NaN
  const size_t floats = 2 * count;
  uint32_t non_finite = 0;
  for (size_t i = 0; i < floats; ++i) {
    uint32_t bits;
    std::memcpy(&bits, src + 4 * i, 4);
    if (dst != nullptr) std::memcpy(dst + 4 * i, &bits, 4);
    non_finite |= static_cast<uint32_t>((bits & kExponent) == kExponent);
  }
  if (non_finite == 0) return absl::OkStatus();
  for (size_t i = 0; i < count; ++i) {
    float x, y;
    std::memcpy(&x, src + 8 * i, 4);
    std::memcpy(&y, src + 8 * i + 4, 4);
    if (!std::isfinite(x) || !std::isfinite(y)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "sample %d: coordinate (x=%g, y=%g) of histogram '%s' is not finite; nothing of "
          "this message was applied",
          i, x, y, spec.name));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckIngestMessage(const HistogramSpec& spec, SampleKind kind, size_t payload_bytes) {
  const size_t element = SampleBytes(kind);
  if (payload_bytes % element != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "payload of %d bytes is not a multiple of %d (%s); nothing of this message was applied",
        payload_bytes, element, KindName(kind)));
  }
  if (kind == SampleKind::kCoordXY && !spec.has_both_axes()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "histogram '%s' has no %s: (x, y) coordinates need both x_axis and y_axis; send "
        "SAMPLE_TYPE_BIN_INDEX_U32 or create the histogram with axes",
        spec.name,
        spec.x_axis ? "y_axis" : (spec.y_axis ? "x_axis" : "axes")));
  }
  return absl::OkStatus();
}

absl::Status CopyValidatedSamples(const HistogramSpec& spec, SampleKind kind, const uint8_t* src,
                                  size_t count, uint8_t* dst) {
  return kind == SampleKind::kBinIndex ? CopyBinIndices(spec, src, count, dst)
                                       : CopyCoordinates(spec, src, count, dst);
}

}  // namespace histd::server
