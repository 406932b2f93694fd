// Shared pieces of the benchmark programs: CUDA checks that abort, event timing with a
// median over repetitions, the device-copy floor measured in the same process, and the
// one table each benchmark prints.
#pragma once

#include <cuda_runtime.h>

#include "absl/status/status.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#define BENCH_CUDA(expr)                                                             \
  do {                                                                               \
    cudaError_t e_ = (expr);                                                         \
    if (e_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #expr, cudaGetErrorName(e_)); \
      std::exit(2);                                                                  \
    }                                                                                \
  } while (0)

// Exits with the status's message when a host entry point returns an error.
#define BENCH_OK(expr)                                                                 \
  do {                                                                                 \
    const absl::Status s_ = (expr);                                                    \
    if (!s_.ok()) {                                                                    \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, s_.ToString().c_str());   \
      std::exit(3);                                                                    \
    }                                                                                  \
  } while (0)

namespace histd::bench {

// Median milliseconds of `reps` runs of fn (each enqueued on `stream`), after `warmup` runs.
inline double MedianMs(const std::function<void(cudaStream_t)>& fn, cudaStream_t stream = 0,
                       int reps = 20, int warmup = 3) {
  cudaEvent_t start, stop;
  BENCH_CUDA(cudaEventCreate(&start));
  BENCH_CUDA(cudaEventCreate(&stop));
  for (int i = 0; i < warmup; ++i) fn(stream);
  BENCH_CUDA(cudaStreamSynchronize(stream));
  std::vector<float> ms(reps);
  for (int i = 0; i < reps; ++i) {
    BENCH_CUDA(cudaEventRecord(start, stream));
    fn(stream);
    BENCH_CUDA(cudaEventRecord(stop, stream));
    BENCH_CUDA(cudaEventSynchronize(stop));
    BENCH_CUDA(cudaGetLastError());
    BENCH_CUDA(cudaEventElapsedTime(&ms[i], start, stop));
  }
  BENCH_CUDA(cudaEventDestroy(start));
  BENCH_CUDA(cudaEventDestroy(stop));
  std::nth_element(ms.begin(), ms.begin() + reps / 2, ms.end());
  return ms[reps / 2];
}

// Device-to-device copy bandwidth in GB/s counting bytes read plus bytes written: the
// hardware floor every memory-bound kernel is compared with, measured in the same run.
inline double CopyBandwidthGBs(size_t bytes = size_t{1} << 30) {
  void *a, *b;
  BENCH_CUDA(cudaMalloc(&a, bytes));
  BENCH_CUDA(cudaMalloc(&b, bytes));
  BENCH_CUDA(cudaMemset(a, 1, bytes));
  const double ms = MedianMs([&](cudaStream_t s) { BENCH_CUDA(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s)); });
  BENCH_CUDA(cudaFree(a));
  BENCH_CUDA(cudaFree(b));
  return 2.0 * bytes / (ms * 1e6);
}

// "NVIDIA H100 80GB HBM3, 132 SMs, 50 MB L2, 2026-11-22"
inline std::string DeviceLine() {
  int dev = 0;
  BENCH_CUDA(cudaGetDevice(&dev));
  cudaDeviceProp p{};
  BENCH_CUDA(cudaGetDeviceProperties(&p, dev));
  char date[32];
  std::time_t t = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d", std::gmtime(&t));
  char line[256];
  std::snprintf(line, sizeof line, "%s, sm_%d%d, %d SMs, %d MB L2, %s", p.name, p.major, p.minor,
                p.multiProcessorCount, p.l2CacheSize >> 20, date);
  return line;
}

// A markdown table: set the header, add rows of already formatted cells, print.
class Table {
 public:
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void Print(const std::string& title) const {
    std::printf("\n### %s\n\n", title.c_str());
    PrintRow(header_);
    std::string sep = "|";
    for (size_t i = 0; i < header_.size(); ++i) sep += " --- |";
    std::printf("%s\n", sep.c_str());
    for (const auto& r : rows_) PrintRow(r);
    std::fflush(stdout);
  }

 private:
  static void PrintRow(const std::vector<std::string>& cells) {
    std::string line = "|";
    for (const auto& c : cells) line += " " + c + " |";
    std::printf("%s\n", line.c_str());
  }
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// printf into a std::string, for table cells.
template <typename... Args>
std::string Fmt(const char* format, Args... args) {
  char buf[128];
  std::snprintf(buf, sizeof buf, format, args...);
  return buf;
}

}  // namespace histd::bench
