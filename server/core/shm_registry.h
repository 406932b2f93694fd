// The shared-memory regions one ingest stream has registered, by the names its producer
// gave them (docs/shm-ingest.md). Owned by the stream: a region is usable only by the
// stream that registered it, and the table goes with the stream. Dropping a region from
// the table (Unregister, or the table's end) does not unmap it while messages in flight
// still hold it (ShmRegion is shared).
//
// Thread safety: none; one thread at a time (the read callbacks of the stream's
// registrations and shared-memory messages: the stream's next read starts only once such a
// callback is done with the table).
#pragma once

#include <map>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "server/core/memory_budget.h"
#include "server/core/shm_region.h"

namespace histd::server {

class ShmRegistry {
 public:
  explicit ShmRegistry(int max_regions) : max_regions_(max_regions) {}

  // Opens and maps `key` (ShmRegion::Open) under `name`. INVALID_ARGUMENT for a bad name,
  // ALREADY_EXISTS for a name in use, RESOURCE_EXHAUSTED beyond max_regions; each checked
  // before the object is opened. Then ShmRegion::Open's errors.
  absl::Status Register(const std::string& name, const std::string& key, uint64_t byte_size,
                        Engine& engine, MemoryBudget& budget);
  // NOT_FOUND when no region has that name.
  absl::Status Unregister(const std::string& name);
  // NOT_FOUND when no region has that name.
  absl::StatusOr<std::shared_ptr<const ShmRegion>> Find(const std::string& name) const;

  size_t size() const { return regions_.size(); }

 private:
  const int max_regions_;
  std::map<std::string, std::shared_ptr<const ShmRegion>> regions_;
};

}  // namespace histd::server
