// CPU engine ingest benchmark: Engine::Apply of the CPU engine (engine/cpu/cpu_ingest.h) on
// one staging buffer of 2^22 bin indices spread over 16 histograms of 256 x 8192 (Roulo's
// shape; 32 MiB of bins, like the load generator's), per thread count. The peer in the
// same process is a plain single-threaded loop with no saturation check and no
// partitioning, the floor of scattered byte increments on this host.
// Prints one table: data | threads | ns per sample | M samples/s | ratio to the plain loop.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/synchronization/notification.h"
#include "engine/engine.h"
#include "engine/engine_factory.h"

ABSL_FLAG(int, max_threads, 0, "largest engine thread count (0: hardware threads)");
ABSL_FLAG(int, repeat, 15, "applies per cell (the fastest is printed)");

namespace {

constexpr uint32_t kRows = 256, kCols = 8192, kHistograms = 16;
constexpr size_t kSamples = size_t{1} << 22;

std::vector<uint32_t> Indices(bool clustered, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint32_t> v(kSamples);
  std::normal_distribution<float> row(kRows / 2.0f, 8.0f), col(kCols / 2.0f, 64.0f);
  for (uint32_t& x : v) {
    if (!clustered) {
      x = static_cast<uint32_t>(rng() % (uint64_t{kRows} * kCols));
      continue;
    }
    const int r = std::clamp(static_cast<int>(row(rng)), 0, static_cast<int>(kRows) - 1);
    const int c = std::clamp(static_cast<int>(col(rng)), 0, static_cast<int>(kCols) - 1);
    x = static_cast<uint32_t>(r) * kCols + static_cast<uint32_t>(c);
  }
  return v;
}

// Seconds of the fastest of `repeat` runs of fn.
template <typename Fn>
double Fastest(int repeat, Fn fn) {
  double best = 1e30;
  for (int r = 0; r < repeat; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  int max_threads = absl::GetFlag(FLAGS_max_threads);
  if (max_threads <= 0) max_threads = std::max(1u, std::thread::hardware_concurrency());
  const int repeat = std::max(1, absl::GetFlag(FLAGS_repeat));
  std::vector<int> counts;
  for (int t = 1; t < max_threads; t *= 2) counts.push_back(t);
  counts.push_back(max_threads);
  std::printf("## CPU engine ingest: 2^22 bin indices over %u histograms of %u x %u per Apply\n\n",
              kHistograms, kRows, kCols);
  std::printf("host: %u hardware threads; fastest of %d applies per row\n\n",
              std::thread::hardware_concurrency(), repeat);
  std::printf("| data | threads | ns per sample | M samples/s | ratio to the plain loop |\n");
  std::printf("|---|---:|---:|---:|---:|\n");
  for (bool clustered : {false, true}) {
    const std::vector<uint32_t> indices = Indices(clustered, 7);
    // Peer: one thread, bins[h][i]++ (uint8 wraps; no cap, no partitioning).
    std::vector<std::vector<uint8_t>> plain(kHistograms, std::vector<uint8_t>(uint64_t{kRows} * kCols));
    const size_t per = kSamples / kHistograms;
    const double plain_s = Fastest(repeat, [&] {
      for (uint32_t h = 0; h < kHistograms; ++h) {
        uint8_t* b = plain[h].data();
        for (size_t i = h * per; i < (h + 1) * per; ++i) ++b[indices[i]];
      }
    });
    const char* data = clustered ? "clustered (Roulo's eye)" : "uniform";
    std::printf("| %s | plain loop, 1 | %.2f | %.0f | 1.00 |\n", data, plain_s * 1e9 / kSamples,
                kSamples / plain_s / 1e6);
    for (int threads : counts) {
      histd::EngineOptions o;
      o.kind = histd::EngineKind::kCpu;
      o.cpu_threads = threads;
      auto engine = histd::MakeEngine(o);
      if (!engine.ok()) return 1;
      std::vector<std::unique_ptr<histd::HistogramStorage>> hs;
      for (uint32_t h = 0; h < kHistograms; ++h)
        hs.push_back(*(*engine)->CreateHistogram(histd::HistogramShape{kRows, kCols, 255}));
      auto staging = (*engine)->CreateStagingBuffer(kSamples * 4);
      if (!staging.ok()) return 1;
      std::copy(indices.begin(), indices.end(), reinterpret_cast<uint32_t*>((*staging)->data()));
      std::vector<histd::IngestItem> items;
      for (uint32_t h = 0; h < kHistograms; ++h) {
        histd::IngestItem item;
        item.histogram = hs[h].get();
        item.kind = histd::SampleKind::kBinIndex;
        item.byte_offset = h * per * 4;
        item.count = per;
        items.push_back(item);
      }
      const double s = Fastest(repeat, [&] {
        absl::Notification done;
        (*engine)->Apply(**staging, items, [&](absl::Status, std::vector<histd::IngestItemResult>) {
          done.Notify();
        });
        done.WaitForNotification();
      });
      std::printf("| %s | %d | %.2f | %.0f | %.2f |\n", data, threads, s * 1e9 / kSamples,
                  kSamples / s / 1e6, plain_s / s);
    }
  }
  return 0;
}
