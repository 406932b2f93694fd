#include "server/core/snapshot.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "google/protobuf/util/delimited_message_util.h"
#include "histd/v1/snapshot.pb.h"
#include "server/core/crc32c.h"
#include "server/core/histogram_proto.h"

namespace histd::server {
namespace {

constexpr char kFormat[] = "histd.v1.snapshot";

absl::Status Errno(const std::string& path, const char* step) {
  return absl::InternalError(
      absl::StrFormat("snapshot %s: %s failed: %s", path, step, std::strerror(errno)));
}

absl::Status DataLoss(const std::string& path, const std::string& problem) {
  return absl::DataLossError(absl::StrFormat(
      "snapshot %s: %s; it was not restored (move it away to start without it)", path, problem));
}

// Closes the descriptor on every path out.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

uint32_t Checksum(const v1::HistogramSnapshot& h) {
  const uint32_t info = Crc32c(reinterpret_cast<const uint8_t*>(h.info().data()), h.info().size());
  return Crc32c(reinterpret_cast<const uint8_t*>(h.bins().data()), h.bins().size(), info);
}

// One pass over the bins: their sum, how many read cap, how many exceed it (never, intact).
struct BinSums {
  uint64_t total = 0, saturated = 0, above_cap = 0;
};
BinSums Sums(const std::string& bins, uint32_t cap) {
  BinSums s;
  for (unsigned char b : bins) {
    s.total += b;
    s.saturated += b == cap;
    s.above_cap += b > cap;
  }
  return s;
}

// One histogram, counters read before bins (see the header).
absl::Status Capture(const HistogramEntry& entry, Engine& engine, v1::HistogramSnapshot* out) {
  v1::HistogramInfo info;
  EntryToInfo(entry, engine.device(), &info);
  const HistogramShape& shape = entry.spec().shape;
  ReadSpec all;
  all.region = Region{0, shape.rows, 0, shape.cols};
  std::string* bins = out->mutable_bins();
  bins->resize(shape.bins());
  if (absl::Status s = engine.ReadBins(entry.storage(), all, bins->data()); !s.ok()) return s;
  const BinSums sums = Sums(*bins, shape.cap);
  info.set_total_count(sums.total);
  info.set_saturated_bins(sums.saturated);
  if (!info.SerializeToString(out->mutable_info())) {
    return absl::InternalError("cannot serialize the histogram's info");
  }
  out->set_crc32c(Checksum(*out));
  return absl::OkStatus();
}

// Flushes the directory holding `path`, so that a rename in it survives a crash.
absl::Status SyncDirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  Fd d{open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)};
  if (d.fd < 0) return Errno(path, "opening its directory");
  if (fsync(d.fd) != 0) return Errno(path, "flushing its directory");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SnapshotStats> WriteSnapshot(const std::string& path, const HistogramStore& store,
                                            Engine& engine) {
  const std::string tmp = path + ".tmp";
  const std::vector<std::shared_ptr<HistogramEntry>> entries = store.List();
  const absl::Time begin = absl::Now();
  SnapshotStats stats;
  stats.path = path;
  {
    Fd f{open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
    if (f.fd < 0) return Errno(tmp, "creating the file");
    bool written = true;
    {
      google::protobuf::io::FileOutputStream stream(f.fd);
      v1::SnapshotHeader header;
      header.set_format(kFormat);
      header.set_histograms(static_cast<uint32_t>(entries.size()));
      header.set_engine(engine.name());
      header.set_written_unix_seconds(absl::ToUnixSeconds(absl::Now()));
      written = google::protobuf::util::SerializeDelimitedToZeroCopyStream(header, &stream);
      for (size_t i = 0; written && i < entries.size(); ++i) {
        v1::HistogramSnapshot h;
        if (absl::Status s = Capture(*entries[i], engine, &h); !s.ok()) {
          unlink(tmp.c_str());
          return absl::Status(s.code(), absl::StrFormat("snapshot %s: reading histogram '%s': %s",
                                                        path, entries[i]->name(), s.message()));
        }
        written = google::protobuf::util::SerializeDelimitedToZeroCopyStream(h, &stream);
        stats.histograms += 1;
        stats.bin_bytes += h.bins().size();
      }
      written = stream.Flush() && written;
      errno = stream.GetErrno();
    }
    if (!written) {
      const absl::Status s = Errno(tmp, "writing");
      unlink(tmp.c_str());
      return s;
    }
    if (fsync(f.fd) != 0) {
      const absl::Status s = Errno(tmp, "flushing to disk");
      unlink(tmp.c_str());
      return s;
    }
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    const absl::Status s = Errno(path, "renaming the new snapshot into place");
    unlink(tmp.c_str());
    return s;
  }
  if (absl::Status s = SyncDirectoryOf(path); !s.ok()) return s;
  stats.seconds = absl::ToDoubleSeconds(absl::Now() - begin);
  return stats;
}

absl::StatusOr<SnapshotStats> LoadSnapshot(const std::string& path, HistogramStore& store,
                                           Engine& engine) {
  Fd f{open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (f.fd < 0) {
    if (errno == ENOENT) return absl::NotFoundError(absl::StrFormat("no snapshot at %s", path));
    return Errno(path, "opening");
  }
  google::protobuf::io::FileInputStream stream(f.fd);
  bool clean_eof = false;
  v1::SnapshotHeader header;
  if (!google::protobuf::util::ParseDelimitedFromZeroCopyStream(&header, &stream, &clean_eof) ||
      header.format() != kFormat) {
    return DataLoss(path, absl::StrFormat("not a histd snapshot (no \"%s\" header)", kFormat));
  }
  const absl::Time begin = absl::Now();
  SnapshotStats stats;
  stats.path = path;
  for (uint32_t i = 0; i < header.histograms(); ++i) {
    v1::HistogramSnapshot h;
    if (!google::protobuf::util::ParseDelimitedFromZeroCopyStream(&h, &stream, &clean_eof)) {
      return DataLoss(path, absl::StrFormat("truncated or corrupt at histogram %d of %d", i + 1,
                                            header.histograms()));
    }
    v1::HistogramInfo info;
    if (Checksum(h) != h.crc32c() || !info.ParseFromString(h.info())) {
      return DataLoss(path, absl::StrFormat("histogram %d of %d does not match its checksum",
                                            i + 1, header.histograms()));
    }
    absl::StatusOr<HistogramSpec> spec = SpecFromProto(info.spec());
    if (!spec.ok()) {
      return DataLoss(path, absl::StrFormat("histogram %d of %d: %s", i + 1, header.histograms(),
                                            spec.status().message()));
    }
    const std::string& name = spec->name;
    const uint64_t bins = uint64_t{spec->shape.rows} * spec->shape.cols;
    if (h.bins().size() != bins) {
      return DataLoss(path, absl::StrFormat("histogram '%s' holds %d bin bytes, its shape %d x %d "
                                            "needs %d", name, h.bins().size(), spec->shape.rows,
                                            spec->shape.cols, bins));
    }
    const auto* data = reinterpret_cast<const uint8_t*>(h.bins().data());
    const BinSums sums = Sums(h.bins(), spec->shape.cap);
    if (sums.total != info.total_count() || sums.saturated != info.saturated_bins()) {
      return DataLoss(path, absl::StrFormat("histogram '%s': its bins do not add up to the "
                                            "total_count and saturated_bins recorded with them",
                                            name));
    }
    if (sums.above_cap != 0) {
      return DataLoss(path, absl::StrFormat("histogram '%s' has %d bins above its cap %d", name,
                                            sums.above_cap, spec->shape.cap));
    }
    absl::StatusOr<std::shared_ptr<HistogramEntry>> entry = store.Create(*spec);
    if (absl::IsInvalidArgument(entry.status())) {
      // A name, shape or axis no daemon accepts: the file is damaged, whatever its checksum.
      return DataLoss(path, absl::StrFormat("histogram %d of %d: %s", i + 1, header.histograms(),
                                            entry.status().message()));
    }
    if (!entry.ok()) {
      return absl::Status(entry.status().code(),
                          absl::StrFormat("snapshot %s: restoring histogram '%s': %s", path, name,
                                          entry.status().message()));
    }
    if (absl::Status s = engine.MergeFromHost(data, (*entry)->storage()); !s.ok()) {
      (void)store.Delete(name);
      return absl::Status(s.code(), absl::StrFormat("snapshot %s: restoring histogram '%s': %s",
                                                    path, name, s.message()));
    }
    (*entry)->RestoreCounters(CountersFromProto(info));
    stats.histograms += 1;
    stats.bin_bytes += bins;
  }
  v1::HistogramSnapshot extra;
  if (google::protobuf::util::ParseDelimitedFromZeroCopyStream(&extra, &stream, &clean_eof) ||
      !clean_eof) {
    return DataLoss(path, absl::StrFormat("bytes follow the %d histograms its header declares",
                                          header.histograms()));
  }
  stats.seconds = absl::ToDoubleSeconds(absl::Now() - begin);
  return stats;
}

}  // namespace histd::server
