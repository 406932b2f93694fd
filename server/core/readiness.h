// Where a daemon is in its life, for readiness probes (/readyz) and logs.
//
//   kStarting   the engine and buffers are being set up
//   kRestoring  the snapshot is being restored (can outlast a liveness probe: see the
//               startupProbe in deploy/)
//   kServing    accepting RPCs: the only ready state
//   kDraining   SIGTERM: stopping, applying and acknowledging what was received, snapshotting
// Thread safety: Set and state may be called from any thread.
#pragma once

#include <atomic>

namespace histd::server {

enum class LifeState { kStarting, kRestoring, kServing, kDraining };

class Readiness {
 public:
  void Set(LifeState state) { state_.store(state, std::memory_order_release); }
  LifeState state() const { return state_.load(std::memory_order_acquire); }
  bool ready() const { return state() == LifeState::kServing; }

  static const char* Name(LifeState state) {
    switch (state) {
      case LifeState::kStarting: return "starting";
      case LifeState::kRestoring: return "restoring the snapshot";
      case LifeState::kServing: return "serving";
      case LifeState::kDraining: return "draining (shutting down)";
    }
    return "unknown";
  }

 private:
  std::atomic<LifeState> state_{LifeState::kStarting};
};

}  // namespace histd::server
