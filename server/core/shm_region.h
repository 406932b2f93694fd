// A producer's POSIX shared-memory object, mapped read-only for zero-copy ingest
// (docs/shm-ingest.md).
//
// Open() checks the object before mapping it: a regular object, owned by the daemon's
// effective user, not writable by group or others (either could shrink it under the mapping,
// and a read past its end is SIGBUS), at least byte_size bytes. The mapping's bytes, in
// whole pages, are charged to the host budget; the engine then registers the mapping
// (Engine::RegisterHostRegion) to read it in place. Everything is undone, in reverse, when
// the last reference goes: the region is shared by the stream's table of regions and by
// every message in flight that reads it.
//
// Thread safety: immutable after Open; any method from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "model/histogram_types.h"
#include "server/core/memory_budget.h"
#include "server/core/sample_payload.h"

namespace histd::server {

class ShmRegion : public std::enable_shared_from_this<ShmRegion> {
 public:
  // NOT_FOUND (no such object), PERMISSION_DENIED (owner, mode, or opening it),
  // INVALID_ARGUMENT (key, not regular, byte_size 0 or beyond the object),
  // RESOURCE_EXHAUSTED (budget), or the engine's error.
  static absl::StatusOr<std::shared_ptr<ShmRegion>> Open(const std::string& key,
                                                         uint64_t byte_size, Engine& engine,
                                                         MemoryBudget& budget);
  ~ShmRegion();
  ShmRegion(const ShmRegion&) = delete;
  ShmRegion& operator=(const ShmRegion&) = delete;

  const std::string& key() const { return key_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  // The engine's registration; null when the engine does not read regions in place.
  const HostRegion* host_region() const { return host_region_.get(); }

  // The byte range of `count` samples of `kind` at `offset`: INVALID_ARGUMENT when offset
  // is not a multiple of the sample size, OUT_OF_RANGE when the range (overflow-checked)
  // ends beyond the region.
  absl::StatusOr<size_t> CheckRange(uint64_t offset, uint64_t count, SampleKind kind) const;

  // The bytes [offset, offset + bytes) as a payload that keeps this region mapped (for
  // engines that stage). Requires the range to lie inside the region.
  SamplePayload Payload(size_t offset, size_t bytes) const;

 private:
  ShmRegion(std::string key, uint8_t* data, size_t size, MemoryCharge charge)
      : key_(std::move(key)), data_(data), size_(size), charge_(std::move(charge)) {}

  const std::string key_;
  uint8_t* const data_;
  const size_t size_;
  MemoryCharge charge_;
  std::unique_ptr<HostRegion> host_region_;  // unregistered before the mapping goes
};

}  // namespace histd::server
