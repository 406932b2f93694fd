// Pinned host-to-device copy bandwidth: the floor that zero-copy local ingest is measured
// against (docs/shm-ingest.md). cudaMemcpyAsync of large chunks from cudaHostAlloc memory
// into device memory, alternating two streams, on each visible device alone and then on
// all of them at once (one thread per device), each for about `seconds`.
//
// Thread safety: call from one thread, while nothing else loads the devices' copy engines.
#pragma once

#include <cstddef>
#include <vector>

#include "absl/status/statusor.h"

namespace histd::bench {

struct PinnedCopyBandwidth {
  std::vector<double> device_gb_per_s;  // each device alone, by CUDA device index
  double all_gb_per_s = 0;              // every device at once, summed
};

// UNAVAILABLE without a CUDA build or a visible device.
absl::StatusOr<PinnedCopyBandwidth> MeasurePinnedCopy(double seconds, size_t chunk_bytes);

}  // namespace histd::bench
