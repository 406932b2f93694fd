#include "server/core/memory_budget.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"

namespace histd::server {

MemoryCharge& MemoryCharge::operator=(MemoryCharge&& other) noexcept {
  if (this != &other) {
    Release();
    budget_ = std::exchange(other.budget_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void MemoryCharge::Release() {
  if (budget_ != nullptr && bytes_ != 0) budget_->Return(bytes_);
  budget_ = nullptr;
  bytes_ = 0;
}

MemoryBudget::MemoryBudget(std::string name, std::string flag, uint64_t limit)
    : name_(std::move(name)), flag_(std::move(flag)), limit_(limit) {}

absl::StatusOr<MemoryCharge> MemoryBudget::Charge(uint64_t bytes, std::string_view what) {
  if (absl::Status s = Reserve(bytes, what); !s.ok()) return s;
  return MemoryCharge(this, bytes);
}

absl::Status MemoryBudget::Reserve(uint64_t bytes, std::string_view what) {
  if (bytes == 0) return absl::OkStatus();
  uint64_t used = used_.load(std::memory_order_relaxed);
  for (;;) {
    if (bytes > limit_ || used > limit_ - bytes) {
      refusals_.fetch_add(1, std::memory_order_relaxed);
      return absl::ResourceExhaustedError(absl::StrFormat(
          "%s needs %u bytes, but the %s budget has %u of %u bytes free (%s); retry when "
          "others finish, or raise the budget",
          what, bytes, name_, limit_ - std::min(used, limit_), limit_, flag_));
    }
    if (used_.compare_exchange_weak(used, used + bytes, std::memory_order_relaxed)) break;
  }
  const uint64_t now = used + bytes;
  uint64_t peak = peak_.load(std::memory_order_relaxed);
  while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  return absl::OkStatus();
}

DeviceMemoryBudgets::DeviceMemoryBudgets(const std::vector<std::string>& devices,
                                         const std::vector<uint64_t>& limits) {
  for (size_t i = 0; i < limits.size(); ++i) {
    budgets_.push_back(std::make_unique<MemoryBudget>(
        absl::StrFormat("%s device memory", i < devices.size() ? devices[i] : "device"),
        "--max_device_memory_bytes", limits[i]));
  }
}

std::vector<DeviceMemoryBudget*> DeviceMemoryBudgets::budgets() const {
  std::vector<DeviceMemoryBudget*> out;
  for (const auto& b : budgets_) out.push_back(b.get());
  return out;
}

uint64_t DeviceMemoryBudgets::Sum(uint64_t (MemoryBudget::*field)() const) const {
  uint64_t total = 0;
  for (const auto& b : budgets_) {
    const uint64_t v = ((*b).*field)();
    total = v > std::numeric_limits<uint64_t>::max() - total ? std::numeric_limits<uint64_t>::max()
                                                             : total + v;
  }
  return total;
}

uint64_t DeviceMemoryBudgets::limit() const { return Sum(&MemoryBudget::limit); }
uint64_t DeviceMemoryBudgets::used() const { return Sum(&MemoryBudget::used); }
uint64_t DeviceMemoryBudgets::peak() const { return Sum(&MemoryBudget::peak); }
uint64_t DeviceMemoryBudgets::refusals() const { return Sum(&MemoryBudget::refusals); }

namespace {

// The first line of `path` as a byte count; 0 when absent or "max".
uint64_t ReadLimitFile(const char* path) {
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line)) return 0;
  uint64_t value = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(line), &value)) return 0;
  return value;
}

}  // namespace

uint64_t HostMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  uint64_t bytes = pages > 0 && page_size > 0 ? uint64_t(pages) * uint64_t(page_size) : 0;
  // cgroup v2, then v1: a container's limit is what the OOM killer enforces.
  for (const char* path : {"/sys/fs/cgroup/memory.max",
                           "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    const uint64_t limit = ReadLimitFile(path);
    if (limit != 0 && (bytes == 0 || limit < bytes)) bytes = limit;
  }
  return bytes;
}

}  // namespace histd::server
