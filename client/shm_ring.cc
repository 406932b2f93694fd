#include "client/shm_ring.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <random>

#include "absl/strings/str_cat.h"

namespace histd::client {
namespace {

constexpr size_t kAlign = 8;  // fits both sample types

size_t AlignUp(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// A name no other ring of this host uses at this moment.
std::string FreshKey() {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t salt = std::random_device{}();
  return absl::StrCat("/histd-", getpid(), "-", salt % 1000000, "-", counter.fetch_add(1));
}

}  // namespace

absl::StatusOr<std::unique_ptr<ShmRing>> ShmRing::Create(IngestStream* stream, size_t bytes,
                                                         std::string region) {
  if (bytes == 0) return absl::InvalidArgumentError("a shared-memory ring needs bytes > 0");
  const std::string key = FreshKey();
  const int fd = shm_open(key.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    return absl::UnavailableError(absl::StrCat("shm_open ", key, ": ", strerror(errno)));
  }
  // Mode 0600: the daemon refuses objects that group or others may write.
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const int err = errno;
    close(fd);
    shm_unlink(key.c_str());
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot size shared memory ", key, " to ", bytes, " bytes: ", strerror(err)));
  }
  void* data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int map_errno = errno;
  close(fd);
  if (data == MAP_FAILED) {
    shm_unlink(key.c_str());
    return absl::ResourceExhaustedError(absl::StrCat("cannot map ", key, ": ", strerror(map_errno)));
  }
  std::unique_ptr<ShmRing> ring(
      new ShmRing(stream, static_cast<uint8_t*>(data), bytes, std::move(region)));
  absl::Status registered = stream->RegisterShmRegion(ring->region_, key, bytes);
  shm_unlink(key.c_str());  // registered or not, the name is no longer needed
  if (!registered.ok()) return registered;
  return ring;
}

ShmRing::~ShmRing() { munmap(data_, size_); }

absl::StatusOr<absl::Span<uint8_t>> ShmRing::Reserve(size_t bytes) {
  if (reserved_) return absl::FailedPreconditionError("a reservation is already open");
  if (bytes > size_) {
    return absl::InvalidArgumentError(absl::StrCat("a message of ", bytes,
                                                   " bytes does not fit the ring's ", size_));
  }
  while (true) {
    const uint64_t acked = stream_->acknowledged_through();
    while (!in_flight_.empty() && in_flight_.front().sequence <= acked) in_flight_.pop_front();
    if (in_flight_.empty()) head_ = 0;
    size_t begin = AlignUp(head_);
    if (begin + bytes > size_) begin = 0;  // wrap
    const size_t end = begin + bytes;
    bool overlaps = false;
    for (const Range& r : in_flight_) overlaps |= begin < r.end && r.begin < end;
    if (!overlaps) {
      reserved_ = true;
      reserved_begin_ = begin;
      reserved_bytes_ = bytes;
      return absl::Span<uint8_t>(data_ + begin, bytes);
    }
    absl::Status waited = stream_->WaitForAck(in_flight_.front().sequence);
    if (!waited.ok()) return waited;
  }
}

absl::Status ShmRing::Commit(const std::string& histogram, histd::v1::SampleType type) {
  if (!reserved_) return absl::FailedPreconditionError("no reservation to commit");
  reserved_ = false;
  const size_t element = type == histd::v1::SAMPLE_TYPE_XY_F32 ? 8 : 4;
  if (reserved_bytes_ % element != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(reserved_bytes_, " bytes are not a whole number of ", element, "-byte samples"));
  }
  absl::StatusOr<uint64_t> sequence = stream_->SendShm(histogram, type, region_, reserved_begin_,
                                                       reserved_bytes_ / element);
  if (!sequence.ok()) return sequence.status();
  in_flight_.push_back(Range{*sequence, reserved_begin_, reserved_begin_ + reserved_bytes_});
  head_ = reserved_begin_ + reserved_bytes_;
  return absl::OkStatus();
}

absl::Status ShmRing::Write(const std::string& histogram, histd::v1::SampleType type,
                            absl::string_view packed) {
  absl::StatusOr<absl::Span<uint8_t>> space = Reserve(packed.size());
  if (!space.ok()) return space.status();
  if (!packed.empty()) std::memcpy(space->data(), packed.data(), packed.size());
  return Commit(histogram, type);
}

}  // namespace histd::client
