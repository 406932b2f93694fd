// histd_bench_render: where a render's time goes, stage by stage, in-process (no gRPC, no
// ingest): the engine's pooled reads (server/core/pooled_view.h: a sum view and the max view
// that marks saturated cells), drawing (server/core/heatmap.h), PNG encoding
// (server/core/png_encode.h). Peer in the same run: one ReadBins of the whole histogram as
// stored (the 2 MiB a client would otherwise fetch). The end-to-end latency under full
// ingest is histd_bench_loadgen --render (docs/rendering.md).
//
//   histd_bench_render [--engine=cuda|cpu] [--rows=256 --cols=8192] [--width=1024
//                      --height=256] [--iterations=200]
//
// The histogram: a Gaussian cluster (peak 200, cap 255, a few hundred saturated bins at its
// centre) over Poisson noise of mean 0.3: a measured wafer's look, not a worst case.
// Views: whole (256 x 8192 to 1024 x 256: 1 x 8 bins a pixel) and zoom (rows [R/4, 3R/4) x
// cols [C/4, C/2): 128 x 2048 bins, 2 pixels a row, 2 bins a pixel); linear and log.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "engine/engine_factory.h"
#include "server/core/heatmap.h"
#include "server/core/histogram_store.h"
#include "server/core/memory_budget.h"
#include "server/core/png_encode.h"
#include "server/core/pooled_view.h"

ABSL_FLAG(std::string, engine, "cuda", "cuda or cpu");
ABSL_FLAG(uint32_t, rows, 256, "histogram rows");
ABSL_FLAG(uint32_t, cols, 8192, "histogram cols");
ABSL_FLAG(uint32_t, width, 1024, "heatmap pixels across");
ABSL_FLAG(uint32_t, height, 256, "heatmap pixels down");
ABSL_FLAG(int, iterations, 200, "renders per row");

namespace histd::server {
namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

struct Quantiles {
  double p50 = 0, p99 = 0;
};

Quantiles Of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, size_t(q * (v.size() - 1) + 0.5))]; };
  return Quantiles{at(0.5), at(0.99)};
}

std::vector<uint8_t> ClusterBins(uint32_t rows, uint32_t cols, uint8_t cap) {
  std::mt19937_64 rng(7);
  std::vector<uint8_t> bins(uint64_t{rows} * cols);
  for (uint32_t r = 0; r < rows; ++r) {
    for (uint32_t c = 0; c < cols; ++c) {
      const double dx = (c - 0.55 * cols) / (0.08 * cols), dy = (r - 0.45 * rows) / (0.12 * rows);
      std::poisson_distribution<int> hits(0.3 + 200.0 * std::exp(-0.5 * (dx * dx + dy * dy)));
      bins[uint64_t{r} * cols + c] = uint8_t(std::min<int>(hits(rng), cap));
    }
  }
  return bins;
}

int Main() {
  EngineOptions engine_options;
  engine_options.kind = absl::GetFlag(FLAGS_engine) == "cpu" ? EngineKind::kCpu : EngineKind::kCuda;
  absl::StatusOr<std::unique_ptr<Engine>> engine = MakeEngine(engine_options);
  if (!engine.ok()) {
    std::fprintf(stderr, "histd_bench_render: %s\n", engine.status().ToString().c_str());
    return 1;
  }
  const uint32_t rows = absl::GetFlag(FLAGS_rows), cols = absl::GetFlag(FLAGS_cols);
  const uint32_t width = absl::GetFlag(FLAGS_width), height = absl::GetFlag(FLAGS_height);
  const int iterations = std::max(1, absl::GetFlag(FLAGS_iterations));
  MemoryBudget budget("host memory", "--max_memory_bytes", uint64_t{16} << 30);
  HistogramStore store(**engine, 4, uint64_t{1} << 31, nullptr);
  HistogramSpec spec;
  spec.name = "wafer";
  spec.shape = HistogramShape{rows, cols, 255};
  absl::StatusOr<std::shared_ptr<HistogramEntry>> entry = store.Create(spec);
  if (!entry.ok()) {
    std::fprintf(stderr, "histd_bench_render: %s\n", entry.status().ToString().c_str());
    return 1;
  }
  const std::vector<uint8_t> bins = ClusterBins(rows, cols, 255);
  if (absl::Status s = (*engine)->MergeFromHost(bins.data(), (*entry)->storage()); !s.ok()) {
    std::fprintf(stderr, "histd_bench_render: %s\n", s.ToString().c_str());
    return 1;
  }

  std::printf("## histd_bench_render\n\nengine %s; histogram %u x %u, Gaussian cluster over "
              "noise; %u x %u pixels; %d renders per row; milliseconds p50 / p99\n\n",
              (*engine)->name().c_str(), rows, cols, width, height, iterations);
  std::printf("| view | scale | pooled reads | draw | PNG encode | total | PNG bytes | whole "
              "histogram read (peer) |\n|---|---|---:|---:|---:|---:|---:|---:|\n");
  std::vector<uint8_t> whole(uint64_t{rows} * cols);
  for (const bool zoom : {false, true}) {
    for (const ColorScale scale : {ColorScale::kLinear, ColorScale::kLog}) {
      ViewRequest request;
      request.region = zoom ? Region{rows / 4, 3 * rows / 4, cols / 4, cols / 2}
                            : Region{0, rows, 0, cols};
      request.rows = height;
      request.cols = width;
      request.mark_saturated = true;
      HeatmapOptions options;
      options.width = width;
      options.height = height;
      options.scale = scale;
      options.frame = false;
      std::vector<double> read, draw, encode, total, peer;
      size_t png_bytes = 0;
      for (int i = 0; i < iterations; ++i) {
        const auto t0 = Clock::now();
        absl::StatusOr<PooledView> view = ReadPooledView(**engine, budget, **entry, request);
        const auto t1 = Clock::now();
        if (!view.ok()) {
          std::fprintf(stderr, "histd_bench_render: %s\n", view.status().ToString().c_str());
          return 1;
        }
        const Image image = DrawHeatmap(*view, spec, options, nullptr);
        const auto t2 = Clock::now();
        absl::StatusOr<std::string> png = EncodePng(image);
        const auto t3 = Clock::now();
        if (!png.ok()) return 1;
        png_bytes = png->size();
        ReadSpec all;
        all.region = Region{0, rows, 0, cols};
        const auto p0 = Clock::now();
        if (!(*engine)->ReadBins((*entry)->storage(), all, whole.data()).ok()) return 1;
        const auto p1 = Clock::now();
        read.push_back(Ms(t1 - t0));
        draw.push_back(Ms(t2 - t1));
        encode.push_back(Ms(t3 - t2));
        total.push_back(Ms(t3 - t0));
        peer.push_back(Ms(p1 - p0));
      }
      auto cell = [](const std::vector<double>& v) {
        const Quantiles q = Of(v);
        char text[64];
        std::snprintf(text, sizeof text, "%.2f / %.2f", q.p50, q.p99);
        return std::string(text);
      };
      std::printf("| %s | %s | %s | %s | %s | %s | %zu | %s |\n", zoom ? "zoom" : "whole",
                  scale == ColorScale::kLog ? "log" : "linear", cell(read).c_str(),
                  cell(draw).c_str(), cell(encode).c_str(), cell(total).c_str(), png_bytes,
                  cell(peer).c_str());
    }
  }
  return 0;
}

}  // namespace
}  // namespace histd::server

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return histd::server::Main();
}
