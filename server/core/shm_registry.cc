#include "server/core/shm_registry.h"

#include <utility>

#include "absl/strings/str_format.h"

namespace histd::server {
namespace {

constexpr size_t kMaxNameLength = 64;

bool ValidName(const std::string& name) {
  if (name.empty() || name.size() > kMaxNameLength) return false;
  for (char c : name) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

absl::Status ShmRegistry::Register(const std::string& name, const std::string& key,
                                   uint64_t byte_size, Engine& engine, MemoryBudget& budget) {
  if (!ValidName(name)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "shared-memory region name '%s' is invalid: want [A-Za-z0-9._-], 1 to %d characters",
        name, kMaxNameLength));
  }
  if (regions_.count(name) != 0) {
    return absl::AlreadyExistsError(absl::StrFormat(
        "a shared-memory region named '%s' is already registered on this stream", name));
  }
  if (regions_.size() >= static_cast<size_t>(max_regions_)) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "%d shared-memory regions are registered on this stream, "
        "--max_shm_regions_per_stream=%d; unregister one first",
        regions_.size(), max_regions_));
  }
  absl::StatusOr<std::shared_ptr<ShmRegion>> region =
      ShmRegion::Open(key, byte_size, engine, budget);
  if (!region.ok()) return region.status();
  regions_.emplace(name, *std::move(region));
  return absl::OkStatus();
}

absl::Status ShmRegistry::Unregister(const std::string& name) {
  if (regions_.erase(name) == 0) {
    return absl::NotFoundError(absl::StrFormat(
        "no shared-memory region named '%s' is registered on this stream", name));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<const ShmRegion>> ShmRegistry::Find(const std::string& name) const {
  auto it = regions_.find(name);
  if (it == regions_.end()) {
    return absl::NotFoundError(absl::StrFormat(
        "no shared-memory region named '%s' is registered on this stream; register it first "
        "(register_shm)",
        name));
  }
  return it->second;
}

}  // namespace histd::server
