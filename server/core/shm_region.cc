#include "server/core/shm_region.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_format.h"

namespace histd::server {
namespace {

// Keeps a region mapped while a staged payload reads it.
class RegionStorage : public PayloadStorage {
 public:
  RegionStorage(std::shared_ptr<const ShmRegion> region) : region_(std::move(region)) {}
  size_t piece_count() const override { return 1; }
  BytePiece piece(size_t) const override { return {region_->data(), region_->size()}; }

 private:
  std::shared_ptr<const ShmRegion> region_;
};

// Closes a descriptor when it goes out of scope.
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) close(fd);
  }
};

}  // namespace

absl::StatusOr<std::shared_ptr<ShmRegion>> ShmRegion::Open(const std::string& key,
                                                           uint64_t byte_size, Engine& engine,
                                                           MemoryBudget& budget) {
  // shm_open's portable form: one leading slash, no other, at most NAME_MAX.
  if (key.size() < 2 || key.size() > 255 || key[0] != '/' ||
      key.find('/', 1) != std::string::npos || key.find('\0') != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "shared-memory key '%s' is not a shm_open name (one leading '/', no other, 1 to 254 "
        "characters after it)",
        key));
  }
  if (byte_size == 0) {
    return absl::InvalidArgumentError("shared-memory region of 0 bytes: byte_size must be >= 1");
  }
  const int fd = shm_open(key.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW, 0);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) {
      return absl::NotFoundError(absl::StrFormat("no shared-memory object '%s'", key));
    }
    if (err == EACCES) {
      return absl::PermissionDeniedError(
          absl::StrFormat("shared-memory object '%s' cannot be opened: %s", key, strerror(err)));
    }
    return absl::InvalidArgumentError(
        absl::StrFormat("shared-memory object '%s' cannot be opened: %s", key, strerror(err)));
  }
  FdCloser closer{fd};
  struct stat st;
  if (fstat(fd, &st) != 0) {
    return absl::InternalError(absl::StrFormat("fstat of '%s': %s", key, strerror(errno)));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("shared-memory object '%s' is not a regular object", key));
  }
  if (st.st_uid != geteuid()) {
    return absl::PermissionDeniedError(absl::StrFormat(
        "shared-memory object '%s' is owned by uid %d, not by the daemon's user (uid %d)", key,
        st.st_uid, geteuid()));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return absl::PermissionDeniedError(absl::StrFormat(
        "shared-memory object '%s' has mode %04o: writable by group or others, who could "
        "shrink it under the daemon; create it with mode 0600 (or 0644)",
        key, st.st_mode & 07777));
  }
  const uint64_t object_size = static_cast<uint64_t>(st.st_size);
  if (byte_size > object_size) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "shared-memory region of %d bytes is larger than object '%s' (%d bytes)", byte_size,
        key, object_size));
  }
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t charged = (byte_size + page - 1) / page * page;  // byte_size <= st_size: fits
  absl::StatusOr<MemoryCharge> charge = budget.Charge(charged, "shared-memory region");
  if (!charge.ok()) return charge.status();
  void* data = mmap(nullptr, byte_size, PROT_READ, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED) {
    const int err = errno;
    if (err == ENOMEM) {
      return absl::ResourceExhaustedError(
          absl::StrFormat("cannot map shared-memory object '%s': %s", key, strerror(err)));
    }
    return absl::InternalError(
        absl::StrFormat("cannot map shared-memory object '%s': %s", key, strerror(err)));
  }
  std::shared_ptr<ShmRegion> region(
      new ShmRegion(key, static_cast<uint8_t*>(data), byte_size, *std::move(charge)));
  absl::StatusOr<std::unique_ptr<HostRegion>> host =
      engine.RegisterHostRegion(region->data_, region->size_);
  if (!host.ok()) return host.status();  // the region's destructor unmaps
  region->host_region_ = *std::move(host);
  return region;
}

ShmRegion::~ShmRegion() {
  host_region_.reset();  // the engine's registration first
  munmap(data_, size_);
}

absl::StatusOr<size_t> ShmRegion::CheckRange(uint64_t offset, uint64_t count,
                                             SampleKind kind) const {
  const uint64_t element = SampleBytes(kind);
  if (offset % element != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "shared-memory offset %d is not a multiple of the sample size %d; nothing of this "
        "message was applied",
        offset, element));
  }
  uint64_t bytes = 0, end = 0;
  if (__builtin_mul_overflow(count, element, &bytes) ||
      __builtin_add_overflow(offset, bytes, &end) || end > size_) {
    return absl::OutOfRangeError(absl::StrFormat(
        "%d samples of %d bytes at offset %d end beyond the shared-memory region '%s' (%d "
        "bytes); nothing of this message was applied",
        count, element, offset, key_, size_));
  }
  return static_cast<size_t>(bytes);
}

SamplePayload ShmRegion::Payload(size_t offset, size_t bytes) const {
  return SamplePayload(std::make_unique<RegionStorage>(shared_from_this()), offset, bytes);
}

}  // namespace histd::server
