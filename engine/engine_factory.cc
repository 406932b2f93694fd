#include "engine/engine_factory.h"

#include "absl/status/status.h"
#include "engine/cpu/cpu_engine.h"
#include "engine/multi_engine.h"
#if HISTD_HAVE_CUDA_ENGINE
#include "engine/cuda/cuda_engine.h"
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
  if (options.cuda_device >= 0) return MakeCudaEngine(options.cuda_device);
  const int count = CudaDeviceCount();
  if (count == 1) return MakeCudaEngine(0);
  std::vector<std::unique_ptr<Engine>> members;
  for (int device = 0; device < count; ++device) {
    auto member = MakeCudaEngine(device);
    if (!member.ok()) return member.status();
    members.push_back(std::move(*member));
  }
  return MakeMultiEngine(std::move(members));
#else
  return absl::UnavailableError("cuda engine: this build has no CUDA engine (nvcc was not found at build time)");
#endif
}

}  // namespace histd
