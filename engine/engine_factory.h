// Chooses and builds an engine. The only place that knows which engines exist.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "engine/engine.h"

namespace histd {

enum class EngineKind { kAuto, kCpu, kCuda };

struct EngineOptions {
  // kAuto: CUDA when this build has it and a GPU is visible, else CPU.
  EngineKind kind = EngineKind::kAuto;
  // CPU engine worker threads; 0 means one per CPU this process may run on (host_cpus.h).
  int cpu_threads = 0;
  // CUDA engine: one device ordinal, or -1 for every visible device (histograms are then
  // placed on the device with the fewest bytes in use; see engine/multi_engine.h).
  int cuda_device = -1;
};

// True when this build includes the CUDA engine and at least one GPU is visible.
bool CudaEngineAvailable();

// UNAVAILABLE when kCuda is asked for and there is no GPU or no CUDA in this build.
absl::StatusOr<std::unique_ptr<Engine>> MakeEngine(const EngineOptions& options);

}  // namespace histd
