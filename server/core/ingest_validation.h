// Validation of one ingest message against its histogram, fused with the copy into a
// staging buffer (one pass over the payload).
//
// Contract: a message is valid when its payload length is a multiple of the element size
// (4 bytes for bin indices, 8 for x/y pairs), every bin index is < rows * cols, and
// coordinates go only to a histogram with both axes. Any float32 coordinate is valid:
// infinities are flow (AxisBin), and NaNs are counted here per axis (NanCounts), since no
// axis bins them. Errors are INVALID_ARGUMENT naming the sample position and value
// (FAILED_PRECONDITION for coordinates on a histogram without axes), and nothing is applied
// of an invalid message.
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"
#include "model/histogram_types.h"
#include "server/core/copy_stores.h"
#include "server/core/histogram_store.h"
#include "server/core/sample_payload.h"

namespace histd::server {

// NaN coordinates seen while copying, per axis (added to).
struct NanCounts {
  uint64_t x = 0;
  uint64_t y = 0;
};

// The error of a message whose sample `position` is the bin index `value` >= bins (the
// host's validation and an engine's, Engine::Apply, report it alike).
absl::Status BinIndexOutOfRangeError(const HistogramSpec& spec, uint64_t position, uint32_t value);

// Checks what does not need the samples: element size and axes.
absl::Status CheckIngestMessage(const HistogramSpec& spec, SampleKind kind, size_t payload_bytes);

// Checks `count` samples at src; when dst is not null, copies them there in the same pass
// (dst may hold partial garbage when the result is not OK). Error messages give a sample's
// position as first_index + its index from src.
// Coordinates' NaNs are added to *nans when it is not null.
absl::Status CopyValidatedSamples(const HistogramSpec& spec, SampleKind kind, const uint8_t* src,
                                  size_t count, uint8_t* dst, size_t first_index = 0,
                                  CopyStores stores = CopyStores::kAuto,
                                  NanCounts* nans = nullptr);

// The same for the samples [first, first + count) of a payload split anywhere (samples may
// straddle its spans); dst receives sample `first` at dst[0]. Positions in error messages
// are counted from the payload's start. Requires (first + count) * element <= size().
absl::Status CopyValidatedPayload(const HistogramSpec& spec, SampleKind kind,
                                  const SamplePayload& payload, size_t first, size_t count,
                                  uint8_t* dst, CopyStores stores = CopyStores::kAuto,
                                  NanCounts* nans = nullptr);

}  // namespace histd::server
