// One device's memory budget as an engine sees it: a histogram's bins, and the bytes a call
// allocates on the device (inputs copied to it, results, workspaces, read scratch), are
// reserved against it before they are allocated, and returned when freed.
//
//   absl::StatusOr<DeviceMemoryHold> hold =
//       DeviceMemoryHold::Take(budget, bytes, "reduce of a 4096 x 4096 array");
//   if (!hold.ok()) return hold.status();  // RESOURCE_EXHAUSTED naming the budget
//   ... allocate, run, free ...
//   // the bytes are returned when `hold` is destroyed
//
// The daemon's budgets (server/core/memory_budget.h, --max_device_memory_bytes), one per
// device, implement it and are handed to the engine with Engine::SetDeviceMemoryBudgets;
// without one (null) nothing is reserved.
// Thread safety: implementations are thread-safe; a hold is moved, not shared, and must not
// outlive its budget.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace histd {

class DeviceMemoryBudget {
 public:
  virtual ~DeviceMemoryBudget() = default;
  // Reserves `bytes` for `what`, or RESOURCE_EXHAUSTED naming the budget and its flag (and
  // reserves nothing). Zero bytes always succeed.
  virtual absl::Status Reserve(uint64_t bytes, std::string_view what) = 0;
  // Returns bytes reserved before.
  virtual void Unreserve(uint64_t bytes) = 0;
  // Bytes that a Reserve could take now (a hint: others may reserve meanwhile).
  virtual uint64_t available() const = 0;
};

// Bytes reserved against a budget until destroyed. Move-only.
class DeviceMemoryHold {
 public:
  // Reserves `bytes` of `budget` (nothing when it is null).
  static absl::StatusOr<DeviceMemoryHold> Take(DeviceMemoryBudget* budget, uint64_t bytes,
                                               std::string_view what) {
    if (budget == nullptr || bytes == 0) return DeviceMemoryHold();
    if (absl::Status s = budget->Reserve(bytes, what); !s.ok()) return s;
    return DeviceMemoryHold(budget, bytes);
  }

  DeviceMemoryHold() = default;
  DeviceMemoryHold(DeviceMemoryHold&& other) noexcept { *this = std::move(other); }
  DeviceMemoryHold& operator=(DeviceMemoryHold&& other) noexcept {
    if (this != &other) {
      Release();
      budget_ = std::exchange(other.budget_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  DeviceMemoryHold(const DeviceMemoryHold&) = delete;
  DeviceMemoryHold& operator=(const DeviceMemoryHold&) = delete;
  ~DeviceMemoryHold() { Release(); }

  uint64_t bytes() const { return bytes_; }
  void Release() {
    if (budget_ != nullptr) budget_->Unreserve(bytes_);
    budget_ = nullptr;
    bytes_ = 0;
  }

 private:
  DeviceMemoryHold(DeviceMemoryBudget* budget, uint64_t bytes) : budget_(budget), bytes_(bytes) {}
  DeviceMemoryBudget* budget_ = nullptr;
  uint64_t bytes_ = 0;
};

}  // namespace histd
