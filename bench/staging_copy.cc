// Staging copy benchmark: the validated copy that stages every ingest message
// (CopyValidatedSamples, server/core/ingest_validation.h) against plain memcpy, per thread count.
// Each thread copies 1 MiB messages of bin indices from its own 256 MiB pool (colder than
// any cache, like gRPC's receive buffers) into its own 16 MiB ring (a staging buffer).
// Prints one table: variant | threads | GB/s (all threads) | per thread | ratio to memcpy.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_format.h"
#include "server/core/ingest_validation.h"

ABSL_FLAG(int, max_threads, 0, "largest thread count (0: hardware threads)");
ABSL_FLAG(int, messages, 2000, "1 MiB messages per thread per measurement");
ABSL_FLAG(int, repeat, 3, "measurements per cell (the median is printed)");

namespace {

using histd::SampleKind;
using histd::server::CopyStores;

constexpr size_t kMessageBytes = size_t{1} << 20;
constexpr size_t kPoolBytes = size_t{256} << 20;
constexpr size_t kRingBytes = size_t{16} << 20;

enum class Variant { kMemcpy, kCached, kAuto };
const char* Name(Variant v) {
  switch (v) {
    case Variant::kMemcpy: return "memcpy (peer: no check)";
    case Variant::kCached: return "validated copy, cached stores (chunked memcpy + re-scan)";
    case Variant::kAuto: return "validated copy, production (streaming stores when large)";
  }
  return "?";
}

struct Buffers {
  std::unique_ptr<uint8_t[]> pool;
  uint8_t* ring;  // 4 KiB aligned, like a pinned staging buffer
  std::unique_ptr<uint8_t, decltype(&std::free)> ring_owner{nullptr, &std::free};
};

Buffers MakeBuffers(uint32_t bins, uint64_t seed) {
  Buffers b;
  b.pool.reset(new uint8_t[kPoolBytes]);
  uint64_t h = seed;
  for (size_t i = 0; i < kPoolBytes; i += 4) {
    h = h * 6364136223846793005ull + 1442695040888963407ull;
    const uint32_t v = static_cast<uint32_t>(h >> 33) % bins;
    std::memcpy(b.pool.get() + i, &v, 4);
  }
  b.ring = static_cast<uint8_t*>(std::aligned_alloc(4096, kRingBytes));
  b.ring_owner.reset(b.ring);
  std::memset(b.ring, 0, kRingBytes);
  return b;
}

// GB/s of all threads together.
double Measure(Variant v, std::vector<Buffers>& bufs, int threads, int messages) {
  histd::server::HistogramSpec spec;
  spec.name = "bench";
  spec.shape.rows = 256;
  spec.shape.cols = 8192;
  spec.shape.cap = 255;
  std::vector<std::thread> pool;
  std::vector<double> seconds(threads);
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      Buffers& b = bufs[t];
      const auto start = std::chrono::steady_clock::now();
      for (int m = 0; m < messages; ++m) {
        // Stride through the pool so that consecutive messages are far apart.
        const uint8_t* src = b.pool.get() + (size_t(m) * 7 * kMessageBytes) % kPoolBytes;
        uint8_t* dst = b.ring + (size_t(m) * kMessageBytes) % kRingBytes;
        if (v == Variant::kMemcpy) {
          std::memcpy(dst, src, kMessageBytes);
        } else {
          const absl::Status s = histd::server::CopyValidatedSamples(
              spec, SampleKind::kBinIndex, src, kMessageBytes / 4, dst, 0,
              v == Variant::kAuto ? CopyStores::kAuto : CopyStores::kCached);
          if (!s.ok()) std::abort();
        }
      }
      seconds[t] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    });
  }
  for (std::thread& th : pool) th.join();
  const double slowest = *std::max_element(seconds.begin(), seconds.end());
  return double(threads) * messages * kMessageBytes / slowest / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  int max_threads = absl::GetFlag(FLAGS_max_threads);
  if (max_threads <= 0) max_threads = std::max(1u, std::thread::hardware_concurrency());
  const int messages = absl::GetFlag(FLAGS_messages), repeat = std::max(1, absl::GetFlag(FLAGS_repeat));
  std::vector<int> counts;
  for (int t = 1; t < max_threads; t *= 2) counts.push_back(t);
  counts.push_back(max_threads);
  std::vector<Buffers> bufs;
  for (int t = 0; t < max_threads; ++t) bufs.push_back(MakeBuffers(256 * 8192, 1000 + t));

  std::printf("## Staging copy: 1 MiB messages of bin indices into a 16 MiB staging ring\n\n");
  std::printf("host: %u hardware threads; median of %d runs of %d messages per thread\n\n",
              std::thread::hardware_concurrency(), repeat, messages);
  std::printf("| variant | threads | GB/s (all threads) | GB/s per thread | ratio to memcpy |\n");
  std::printf("|---|---:|---:|---:|---:|\n");
  for (int threads : counts) {
    double memcpy_gbs = 0;
    for (Variant v : {Variant::kMemcpy, Variant::kCached, Variant::kAuto}) {
      std::vector<double> runs;
      for (int r = 0; r < repeat; ++r) runs.push_back(Measure(v, bufs, threads, messages));
      std::sort(runs.begin(), runs.end());
      const double gbs = runs[runs.size() / 2];
      if (v == Variant::kMemcpy) memcpy_gbs = gbs;
      std::printf("| %s | %d | %.2f | %.2f | %.2f |\n", Name(v), threads, gbs, gbs / threads,
                  gbs / memcpy_gbs);
    }
  }
  return 0;
}
