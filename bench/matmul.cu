// FP32 matmul benchmark: the seed's kernels and the production paths against cuBLAS SGEMM in
// strict FP32 (CUBLAS_PEDANTIC_MATH; CUBLAS_DEFAULT_MATH, which takes no TF32 for SGEMM, shown
// too) run in the same process, and against the FP32 peak computed from the device:
// SMs x 128 FP32 lanes x 2 flops x clock (cudaDevAttrClockRate, the boost clock).
//   variant | shape | time | TFLOP/s | % of FP32 peak | vs cuBLAS | max |diff| / max |C|
// The last column checks each result against cuBLAS's on the same inputs.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/bench_cublas.cuh"
#include "bench/bench_util.cuh"
#include "experiments/matmul/matmul_paths.h"
#include "kernels/matmul/matmul.h"

namespace {

using histd::bench::Fmt;
using histd::bench::MedianMs;
using histd::bench::Table;
using histd::cuda::MatmulWithChoice;
using histd::cuda::MatmulArgs;
using histd::cuda::MatmulChoice;
using histd::cuda::MatmulPath;


__global__ void FillUniform(float* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < n; i += size_t{gridDim.x} * blockDim.x) {
    uint32_t x = static_cast<uint32_t>(i) * 2654435761u ^ seed;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    p[i] = static_cast<float>(x >> 8) * (2.0f / 16777216.0f) - 1.0f;  // [-1, 1)
  }
}

struct Shape {
  const char* label;
  int64_t m, n, k;
  std::string Name() const {
    return Fmt("%s %lld x %lld x %lld", label, (long long)m, (long long)n, (long long)k);
  }
  double Flops() const { return 2.0 * m * n * k; }
};

class Bench {
 public:
  Bench(double peak_tflops, cublasHandle_t handle) : peak_(peak_tflops), handle_(handle) {}

  void Prepare(const Shape& s) {
    Release();
    s_ = s;
    BENCH_CUDA(cudaMalloc(&a_, std::max<size_t>(4, s.m * s.k * 4)));
    BENCH_CUDA(cudaMalloc(&b_, std::max<size_t>(4, s.k * s.n * 4)));
    BENCH_CUDA(cudaMalloc(&c_, std::max<size_t>(4, s.m * s.n * 4)));
    BENCH_CUDA(cudaMalloc(&ref_, std::max<size_t>(4, s.m * s.n * 4)));
    FillUniform<<<1024, 256>>>(a_, s.m * s.k, 1u);
    FillUniform<<<1024, 256>>>(b_, s.k * s.n, 2u);
    BENCH_CUDA(cudaGetLastError());
    BENCH_CUDA(cudaDeviceSynchronize());
    // Reference result: cuBLAS pedantic FP32.
    Cublas(CUBLAS_PEDANTIC_MATH, ref_);
    BENCH_CUDA(cudaDeviceSynchronize());
    ref_host_.resize(s.m * s.n);
    BENCH_CUDA(cudaMemcpy(ref_host_.data(), ref_, s.m * s.n * 4, cudaMemcpyDeviceToHost));
  }

  void Release() {
    for (float** p : {&a_, &b_, &c_, &ref_})
      if (*p != nullptr) {
        BENCH_CUDA(cudaFree(*p));
        *p = nullptr;
      }
    if (ws_ != nullptr) BENCH_CUDA(cudaFree(ws_));
    ws_ = nullptr;
  }

  void Cublas(cublasMath_t mode, float* c) {
    BENCH_CUBLAS(cublasSetMathMode(handle_, mode));
    const float one = 1.0f, zero = 0.0f;
    // Row-major C = A B is column-major C^T = B^T A^T.
    BENCH_CUBLAS(cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, int(s_.n), int(s_.m), int(s_.k), &one, b_, int(s_.n),
                             a_, int(s_.k), &zero, c, int(s_.n)));
  }

  double TimeCublas(cublasMath_t mode, int reps) {
    BENCH_CUBLAS(cublasSetStream(handle_, 0));
    return MedianMs([&](cudaStream_t) { Cublas(mode, c_); }, 0, reps);
  }

  // Median time of one choice; -1 when it cannot run. *err gets max|C - ref| / max|ref|.
  double TimeOurs(MatmulChoice choice, int reps, double* err, MatmulChoice* resolved) {
    const MatmulArgs args{s_.m, s_.n, s_.k, 1.0f, a_, s_.k, b_, s_.n, 0.0f, c_, s_.n};
    const size_t ws = MatmulWithChoice::get_workspace_size(args, choice);
    if (ws_ != nullptr) BENCH_CUDA(cudaFree(ws_));
    ws_ = nullptr;
    if (ws > 0) BENCH_CUDA(cudaMalloc(&ws_, ws));
    if (!MatmulWithChoice::can_implement(args, choice).ok()) return -1;
    *resolved = MatmulWithChoice::Resolved(args, choice);
    BENCH_CUDA(cudaMemset(c_, 0xff, s_.m * s_.n * 4));  // NaN: unwritten outputs show
    const double ms = MedianMs(
        [&](cudaStream_t st) {
          const absl::Status status = MatmulWithChoice::run(args, choice, ws_, st);
          if (!status.ok()) {
            std::fprintf(stderr, "matmul failed: %s\n", std::string(status.message()).c_str());
            std::exit(2);
          }
        },
        0, reps, reps > 5 ? 3 : 1);
    std::vector<float> got(s_.m * s_.n);
    BENCH_CUDA(cudaMemcpy(got.data(), c_, got.size() * 4, cudaMemcpyDeviceToHost));
    double max_diff = 0, max_ref = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      const double d = std::fabs(double(got[i]) - double(ref_host_[i]));
      max_diff = std::isnan(d) ? INFINITY : std::max(max_diff, d);
      max_ref = std::max(max_ref, std::fabs(double(ref_host_[i])));
    }
    *err = max_ref > 0 ? max_diff / max_ref : max_diff;
    return ms;
  }

  void Row(Table& t, const std::string& name, double ms, double peer_ms, double err) {
    const double tf = s_.Flops() / (ms * 1e9);
    t.Add({name, s_.Name(), Fmt("%.3f ms", ms), Fmt("%.1f", tf), Fmt("%.1f%%", 100.0 * tf / peak_),
           peer_ms > 0 ? Fmt("%.3fx", peer_ms / ms) : std::string("-"), err >= 0 ? Fmt("%.1e", err) : std::string("-")});
  }

  static std::string ChoiceName(const MatmulChoice& c) {
    return std::string(histd::cuda::MatmulPathName(c.path)) + (c.split_k > 1 ? Fmt(", split-k %d", c.split_k) : "");
  }

  // Production table: cuBLAS (both modes), auto, and the seed's kernels where affordable.
  void Workload(const std::string& title, const std::vector<Shape>& shapes, bool seeds) {
    Table t({"variant", "shape", "time", "TFLOP/s", "% of FP32 peak", "vs cuBLAS pedantic", "max|diff|/max|C|"});
    for (const Shape& s : shapes) {
      Prepare(s);
      const int reps = s.Flops() > 2e11 ? 10 : 20;
      const double peer = TimeCublas(CUBLAS_PEDANTIC_MATH, reps);
      Row(t, "cuBLAS SGEMM pedantic FP32", peer, peer, -1);
      Row(t, "cuBLAS SGEMM default math", TimeCublas(CUBLAS_DEFAULT_MATH, reps), peer, -1);
      double err = 0;
      MatmulChoice used;
      const double ms = TimeOurs({}, reps, &err, &used);
      Row(t, "histd matmul (auto: " + ChoiceName(used) + ")", ms, peer, err);
      if (seeds && s.Flops() <= 2.0 * 4096.0 * 4096.0 * 4096.0) {
        for (const MatmulPath p : {MatmulPath::kSeedTiled, MatmulPath::kSeedNaive}) {
          const double sm = TimeOurs({p, 1}, 3, &err, &used);
          if (sm > 0) Row(t, histd::cuda::MatmulPathName(p), sm, peer, err);
        }
      }
    }
    Release();
    t.Print(title);
  }

  // Tuning sweep: every SIMT tile with split-k 1, 2, 4 (and the skinny paths where they apply).
  void Sweep(const std::vector<Shape>& shapes) {
    Table t({"variant", "shape", "time", "TFLOP/s", "% of FP32 peak", "vs cuBLAS pedantic", "max|diff|/max|C|"});
    for (const Shape& s : shapes) {
      Prepare(s);
      const int reps = s.Flops() > 2e11 ? 5 : 10;
      const double peer = TimeCublas(CUBLAS_PEDANTIC_MATH, reps);
      Row(t, "cuBLAS SGEMM pedantic FP32", peer, peer, -1);
      for (const MatmulPath p : {MatmulPath::kSimt128x128, MatmulPath::kSimt128x128K16, MatmulPath::kSimt128x128K16S4,
                                 MatmulPath::kSimt128x128K32, MatmulPath::kSimt128x64,
                                 MatmulPath::kSimt64x128, MatmulPath::kSimt64x64, MatmulPath::kSmallM,
                                 MatmulPath::kSmallN}) {
        for (const int split : {1, 2, 4}) {
          if ((p == MatmulPath::kSmallM || p == MatmulPath::kSmallN) && (s.m > 64 && s.n > 64)) continue;
          if (p == MatmulPath::kSmallN && split > 1) continue;
          double err = 0;
          MatmulChoice used;
          const double ms = TimeOurs({p, split}, reps, &err, &used);
          if (ms < 0 || (split > 1 && used.split_k == 1)) continue;
          Row(t, ChoiceName(used), ms, peer, err);
        }
      }
    }
    Release();
    t.Print("Tuning sweep (forced tiles and split-k)");
  }

 private:
  double peak_;
  cublasHandle_t handle_;
  Shape s_{"", 0, 0, 0};
  float *a_ = nullptr, *b_ = nullptr, *c_ = nullptr, *ref_ = nullptr;
  void* ws_ = nullptr;
  std::vector<float> ref_host_;
};

}  // namespace

int main(int argc, char** argv) {
  const bool sweep = argc > 1 && std::string(argv[1]) == "--sweep";
  int dev = 0, sms = 0, clock_khz = 0;
  BENCH_CUDA(cudaGetDevice(&dev));
  BENCH_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  BENCH_CUDA(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
  const double peak = sms * 128.0 * 2.0 * clock_khz * 1e3 / 1e12;
  std::printf("# FP32 matmul benchmark\n\nDevice: %s\n", histd::bench::DeviceLine().c_str());
  std::printf("FP32 peak: %d SMs x 128 lanes x 2 flops x %.0f MHz = %.1f TFLOP/s\n", sms, clock_khz / 1e3, peak);
  std::printf("Our kernels: strict FP32 (FFMA only, no TF32). cuBLAS: SGEMM, row-major via C^T = B^T A^T.\n");
  cublasHandle_t handle;
  BENCH_CUBLAS(cublasCreate(&handle));
  Bench bench(peak, handle);
  bench.Workload("Squares", {{"square", 1024, 1024, 1024}, {"square", 2048, 2048, 2048},
                             {"square", 4096, 4096, 4096}, {"square", 8192, 8192, 8192},
                             {"odd", 4097, 4097, 4097}}, true);
  bench.Workload("Non-square", {{"tall-skinny", 16384, 512, 4096}, {"tall-skinny", 32768, 64, 2048},
                                {"wide", 512, 16384, 4096}, {"small-k", 8192, 8192, 256},
                                {"few rows", 16, 8192, 8192}, {"one row", 1, 8192, 8192},
                                {"one row", 1, 4096, 4096}, {"one column", 8192, 1, 8192}}, false);
  if (sweep) {
    bench.Sweep({{"square", 1024, 1024, 1024}, {"square", 2048, 2048, 2048}, {"square", 4096, 4096, 4096},
                 {"odd", 4097, 4097, 4097}, {"tall-skinny", 16384, 512, 4096}, {"tall-skinny", 32768, 64, 2048},
                 {"wide", 512, 16384, 4096}, {"small-k", 8192, 8192, 256}, {"few rows", 16, 8192, 8192},
                 {"one row", 1, 8192, 8192}, {"one column", 8192, 1, 8192}});
  }
  BENCH_CUBLAS(cublasDestroy(handle));
  return 0;
}
