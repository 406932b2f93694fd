// Fuzz target: the snapshot loader (server/core/snapshot.h LoadSnapshot) into a HistogramStore
// on the CPU engine.
//
// Feeds: byte 0 (flags), then the bytes of a snapshot file, written to a memfd and loaded
// through its /proc/self/fd path. Flag bit 0: before writing, every length-delimited
// HistogramSnapshot after the header that parses gets its crc32c recomputed; bit 1: also
// its info's total_count and saturated_bins recomputed from its bins (so that mutations get
// past the checksum and the sums to the store and the engine). The store allows 16
// histograms of at most 2^16 bins, as a small daemon would.
// Asserts: LoadSnapshot returns OK or DATA_LOSS / RESOURCE_EXHAUSTED / ALREADY_EXISTS (never
// crashes, never another code); on OK the store holds exactly the histograms it reports,
// and each one's bins and ingest counters are those of the file.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/stubs/logging.h"
#include "histd/v1/histograms.pb.h"
#include "histd/v1/snapshot.pb.h"
#include "engine/engine_factory.h"
#include "server/core/crc32c.h"
#include "server/core/histogram_store.h"
#include "server/core/snapshot.h"

namespace histd::fuzz {
namespace {

using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;

[[noreturn]] void Fail(const std::string& what) {
  std::fprintf(stderr, "snapshot_fuzz: %s\n", what.c_str());
  std::abort();
}

struct Expected {
  std::string bins;
  uint64_t samples_applied = 0, messages_applied = 0;
};

// Walks the file's length-delimited messages: repairs checksums (and sums) as the flags
// say, and records each parsable histogram's bins and counters by name.
std::string Repair(const uint8_t* data, size_t size, uint8_t flags,
                   std::map<std::string, Expected>* expected) {
  std::string out;
  size_t pos = 0;
  for (int index = 0; pos < size; ++index) {
    CodedInputStream in(data + pos, static_cast<int>(size - pos));
    uint32_t length;
    if (!in.ReadVarint32(&length) || length > size - pos - in.CurrentPosition()) break;
    const size_t body = pos + in.CurrentPosition();
    v1::HistogramSnapshot h;
    v1::HistogramInfo info;
    if (index == 0 || !h.ParseFromArray(data + body, static_cast<int>(length))) {
      out.append(reinterpret_cast<const char*>(data + pos), body + length - pos);
      pos = body + length;
      continue;
    }
    if (info.ParseFromString(h.info())) {
      if (flags & 2) {
        uint64_t total = 0, saturated = 0;
        for (unsigned char b : h.bins()) {
          total += b;
          saturated += b == info.spec().cap();
        }
        info.set_total_count(total);
        info.set_saturated_bins(saturated);
        h.set_info(info.SerializeAsString());
      }
      Expected& e = (*expected)[info.spec().name()];
      e.bins = h.bins();
      e.samples_applied = info.samples_applied();
      e.messages_applied = info.messages_applied();
    }
    if (flags & 1) {
      const uint32_t crc = server::Crc32c(reinterpret_cast<const uint8_t*>(h.info().data()), h.info().size());
      h.set_crc32c(server::Crc32c(reinterpret_cast<const uint8_t*>(h.bins().data()), h.bins().size(), crc));
    }
    const std::string bytes = h.SerializeAsString();
    std::string prefix;
    {
      google::protobuf::io::StringOutputStream s(&prefix);
      CodedOutputStream(&s).WriteVarint32(static_cast<uint32_t>(bytes.size()));
    }
    out += prefix + bytes;
    pos = body + length;
  }
  out.append(reinterpret_cast<const char*>(data + pos), size - pos);
  return out;
}

}  // namespace
}  // namespace histd::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace histd;
  static Engine* const engine = [] {
    google::protobuf::SetLogHandler(nullptr);
    EngineOptions options;
    options.kind = EngineKind::kCpu;
    options.cpu_threads = 1;
    absl::StatusOr<std::unique_ptr<Engine>> e = MakeEngine(options);
    if (!e.ok()) fuzz::Fail("no CPU engine: " + e.status().ToString());
    return e->release();
  }();
  static const int fd = memfd_create("histd-snapshot-fuzz", 0);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  if (fd < 0) fuzz::Fail("memfd_create failed");
  if (size < 1) return -1;

  std::map<std::string, fuzz::Expected> expected;
  const std::string file = fuzz::Repair(data + 1, size - 1, data[0], &expected);
  if (ftruncate(fd, 0) != 0 || pwrite(fd, file.data(), file.size(), 0) != static_cast<ssize_t>(file.size())) {
    fuzz::Fail("cannot write the memfd");
  }
  server::HistogramStore store(*engine, 16, uint64_t{1} << 16);
  const absl::StatusOr<server::SnapshotStats> loaded = server::LoadSnapshot(path, store, *engine);
  if (!loaded.ok()) {
    if (!absl::IsDataLoss(loaded.status()) && !absl::IsResourceExhausted(loaded.status()) &&
        !absl::IsAlreadyExists(loaded.status())) {
      fuzz::Fail("unexpected code: " + loaded.status().ToString());
    }
    return 0;
  }
  if (loaded->histograms != store.size()) {
    fuzz::Fail("reported " + std::to_string(loaded->histograms) + " histograms, the store holds " +
               std::to_string(store.size()));
  }
  for (const std::shared_ptr<server::HistogramEntry>& entry : store.List()) {
    const auto it = expected.find(entry->name());
    if (it == expected.end()) fuzz::Fail("restored '" + entry->name() + "', which the file lacks");
    const HistogramShape& shape = entry->spec().shape;
    ReadSpec all;
    all.region = Region{0, shape.rows, 0, shape.cols};
    std::string bins(shape.bins(), '\0');
    if (absl::Status s = engine->ReadBins(entry->storage(), all, bins.data()); !s.ok()) {
      fuzz::Fail("reading restored bins: " + s.ToString());
    }
    const server::IngestCounters counters = entry->counters();
    if (bins != it->second.bins || counters.samples_applied != it->second.samples_applied ||
        counters.messages_applied != it->second.messages_applied) {
      fuzz::Fail("histogram '" + entry->name() + "' restored differently from the file");
    }
  }
  return 0;
}
