// The CUDA engine: histograms resident in device memory, ingest through pinned staging
// buffers and a double-buffered stream pipeline (cuda_ingest_pipeline.h), queries and compute
// on the device. Results are bit-identical to the CPU engine for integers.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "engine/engine.h"

namespace histd {

// Visible CUDA devices; 0 when the driver or the device is missing.
int CudaDeviceCount();

// An engine on device `device`. UNAVAILABLE without a usable device.
absl::StatusOr<std::unique_ptr<Engine>> MakeCudaEngine(int device);

}  // namespace histd
