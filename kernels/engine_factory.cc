#include "kernels/engine_factory.h"

#include "absl/status/status.h"
#include "kernels/cpu/cpu_engine.h"
#if HISTD_HAVE_CUDA_ENGINE
#include "kernels/cuda/engine/cuda_engine.h"
#endif

namespace histd {

bool CudaEngineAvailable() {
#if HISTD_HAVE_CUDA_ENGINE
  return CudaDeviceCount() > 0;
#else
  return false;
#endif
}

absl::StatusOr<std::unique_ptr<Engine>> MakeEngine(const EngineOptions& options) {
  EngineKind kind = options.kind;
  if (kind == EngineKind::kAuto) kind = CudaEngineAvailable() ? EngineKind::kCuda : EngineKind::kCpu;
  if (kind == EngineKind::kCpu) return MakeCpuEngine(options.cpu_threads);
#if HISTD_HAVE_CUDA_ENGINE
  if (!CudaEngineAvailable()) return absl::UnavailableError("cuda engine: no CUDA device is visible");
  return MakeCudaEngine(options.cuda_device);
#else
  return absl::UnavailableError("cuda engine: this build has no CUDA engine (nvcc was not found at build time)");
#endif
}

}  // namespace histd
