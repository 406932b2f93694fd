// A memory budget: a limit in bytes that every allocation a client can cause is charged to
// before it is made.
//
//   absl::StatusOr<MemoryCharge> charge = budget.Charge(bytes, "compute result");
//   if (!charge.ok()) return charge.status();  // RESOURCE_EXHAUSTED naming the budget
//   ... allocate and use `bytes` ...
//   // the charge is returned when `charge` is destroyed (or Release()d)
//
// The daemon keeps (server/grpc/server.cc) one for host memory (--max_memory_bytes; histograms
// of the CPU engine, staging buffers, query buffers, compute results) and one per device
// (--max_device_memory_bytes each: DeviceMemoryBudgets; histograms of the CUDA engine and the
// device memory of its compute calls and reads, which the engine reserves itself through the
// DeviceMemoryBudget interface: engine/device_memory_budget.h). A refused charge changes
// nothing: the caller answers RESOURCE_EXHAUSTED and the daemon keeps serving.
//
// Thread safety: every method may be called from any thread. A MemoryCharge is moved, not
// shared, and must not outlive its budget.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/device_memory_budget.h"

namespace histd::server {

class MemoryBudget;

// Bytes held against a budget until destroyed. Move-only.
class MemoryCharge {
 public:
  MemoryCharge() = default;
  MemoryCharge(MemoryCharge&& other) noexcept { *this = std::move(other); }
  MemoryCharge& operator=(MemoryCharge&& other) noexcept;
  MemoryCharge(const MemoryCharge&) = delete;
  MemoryCharge& operator=(const MemoryCharge&) = delete;
  ~MemoryCharge() { Release(); }

  uint64_t bytes() const { return bytes_; }
  void Release();

 private:
  friend class MemoryBudget;
  MemoryCharge(MemoryBudget* budget, uint64_t bytes) : budget_(budget), bytes_(bytes) {}
  MemoryBudget* budget_ = nullptr;
  uint64_t bytes_ = 0;
};

class MemoryBudget final : public DeviceMemoryBudget {
 public:
  // `name` and `flag` appear in refusals, e.g. "host memory", "--max_memory_bytes".
  MemoryBudget(std::string name, std::string flag, uint64_t limit);
  MemoryBudget(const MemoryBudget&) = delete;
  MemoryBudget& operator=(const MemoryBudget&) = delete;

  // Charges `bytes` for `what`, or RESOURCE_EXHAUSTED naming the budget, its flag, what was
  // asked and what is in use. Zero bytes always succeed.
  absl::StatusOr<MemoryCharge> Charge(uint64_t bytes, std::string_view what);
  // The same for an engine's DeviceMemoryHold (the bytes come back through Unreserve).
  absl::Status Reserve(uint64_t bytes, std::string_view what) override;
  void Unreserve(uint64_t bytes) override { Return(bytes); }
  uint64_t available() const override { return limit_ - std::min(used(), limit_); }

  const std::string& name() const { return name_; }
  uint64_t limit() const { return limit_; }
  uint64_t used() const { return used_.load(std::memory_order_relaxed); }
  uint64_t peak() const { return peak_.load(std::memory_order_relaxed); }
  uint64_t refusals() const { return refusals_.load(std::memory_order_relaxed); }

 private:
  friend class MemoryCharge;
  void Return(uint64_t bytes) { used_.fetch_sub(bytes, std::memory_order_relaxed); }

  const std::string name_;
  const std::string flag_;
  const uint64_t limit_;
  std::atomic<uint64_t> used_{0};
  std::atomic<uint64_t> peak_{0};
  std::atomic<uint64_t> refusals_{0};
};

// One budget per device, named "<device> device memory" (e.g. "cuda:1 device memory"), and
// their sums, which the stats RPC reports (/metrics: each device and the sums).
class DeviceMemoryBudgets {
 public:
  // devices[i] names the budget of limits[i] bytes.
  DeviceMemoryBudgets(const std::vector<std::string>& devices, const std::vector<uint64_t>& limits);

  // For Engine::SetDeviceMemoryBudgets, in device order.
  std::vector<DeviceMemoryBudget*> budgets() const;
  size_t count() const { return budgets_.size(); }
  const MemoryBudget& device(size_t i) const { return *budgets_[i]; }
  // Sums over the devices (saturating); peak() is the sum of each device's peak.
  uint64_t limit() const;
  uint64_t used() const;
  uint64_t peak() const;
  uint64_t refusals() const;

 private:
  uint64_t Sum(uint64_t (MemoryBudget::*field)() const) const;
  std::vector<std::unique_ptr<MemoryBudget>> budgets_;
};

// Physical memory of this host, or the cgroup (container) limit when it is lower; 0 when
// neither can be read.
uint64_t HostMemoryBytes();

}  // namespace histd::server
