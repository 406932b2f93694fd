// Transpose benchmark: the seed's variants and the production paths against the device copy
// measured in the same run and against cuBLAS geam (Sgeam for 4-byte, Dgeam for 8-byte
// elements) run in the same process. One table per workload:
//   variant | shape | time | GB/s | % of copy | vs cuBLAS
// GB/s counts bytes read plus bytes written (2 x elements x element size).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/bench_cublas.cuh"
#include "bench/bench_util.cuh"
#include "experiments/transpose/seed_transpose.h"
#include "experiments/transpose/transpose_paths.h"
#include "kernels/transpose/transpose.h"

namespace {

using histd::bench::Fmt;
using histd::bench::MedianMs;
using histd::bench::Table;
using histd::cuda::SeedTranspose;
using histd::cuda::TransposeArgs;
using histd::cuda::TransposePath;


__global__ void FillKernel(uint32_t* p, size_t words, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t{blockDim.x} + threadIdx.x; i < words; i += size_t{gridDim.x} * blockDim.x) {
    uint32_t x = static_cast<uint32_t>(i) * 2654435761u ^ seed;
    x ^= x >> 13;
    x *= 0x5bd1e995u;
    x ^= x >> 15;
    p[i] = x & 0x3f7fffffu;  // finite floats / doubles, all byte values present
  }
}

struct Buffers {
  void* in = nullptr;
  void* out = nullptr;
  size_t bytes = 0;
};

Buffers Alloc(size_t bytes) {
  Buffers b;
  b.bytes = bytes;
  BENCH_CUDA(cudaMalloc(&b.in, bytes));
  BENCH_CUDA(cudaMalloc(&b.out, bytes));
  FillKernel<<<1024, 256>>>(static_cast<uint32_t*>(b.in), bytes / 4, 12345u);
  BENCH_CUDA(cudaGetLastError());
  BENCH_CUDA(cudaMemset(b.out, 0, bytes));
  BENCH_CUDA(cudaDeviceSynchronize());
  return b;
}
void Free(Buffers& b) {
  BENCH_CUDA(cudaFree(b.in));
  BENCH_CUDA(cudaFree(b.out));
}

struct Shape {
  int64_t batch, rows, cols;
  int eb;
  std::string Name() const {
    std::string s = batch > 1 ? Fmt("%lld x ", (long long)batch) : std::string();
    return s + Fmt("%lld x %lld", (long long)rows, (long long)cols) + Fmt(" (%d B)", eb);
  }
  double Bytes() const { return 2.0 * batch * rows * cols * eb; }
};

class Bench {
 public:
  Bench(double copy_gbs, cublasHandle_t handle) : copy_gbs_(copy_gbs), handle_(handle) {}

  // Adds a row; peer_ms < 0 means no peer for this row.
  void Row(Table& t, const std::string& variant, const Shape& s, double ms, double peer_ms) {
    const double gbs = s.Bytes() / (ms * 1e6);
    t.Add({variant, s.Name(), Fmt("%.3f ms", ms), Fmt("%.0f", gbs), Fmt("%.1f%%", 100.0 * gbs / copy_gbs_),
           peer_ms > 0 ? Fmt("%.3fx", peer_ms / ms) : std::string("-")});
  }

  // Median time of one transpose path; -1 when the path cannot take the shape.
  double TimePath(const Shape& s, Buffers& b, TransposePath path) {
    TransposeArgs a;
    a.in = b.in;
    a.out = b.out;
    a.elem_bytes = s.eb;
    a.rows = s.rows;
    a.cols = s.cols;
    a.batch = s.batch;
    using histd::cuda::TransposeWithPath;
    if (!TransposeWithPath::can_implement(a, path).ok()) return -1;
    return MedianMs([&](cudaStream_t st) {
      const absl::Status status = TransposeWithPath::run(a, path, nullptr, st);
      if (!status.ok()) {
        std::fprintf(stderr, "transpose failed: %s\n", std::string(status.message()).c_str());
        std::exit(2);
      }
    });
  }

  // cuBLAS geam, one call per matrix of the batch; -1 for element sizes it has no geam for.
  double TimeGeam(const Shape& s, Buffers& b) {
    if (s.eb != 4 && s.eb != 8) return -1;
    BENCH_CUBLAS(cublasSetStream(handle_, 0));
    return MedianMs([&](cudaStream_t) {
      for (int64_t i = 0; i < s.batch; ++i) {
        const size_t off = static_cast<size_t>(i * s.rows * s.cols * s.eb);
        // Row-major rows x cols = column-major cols x rows; C (column-major rows x cols) = A^T.
        if (s.eb == 4) {
          const float one = 1.0f, zero = 0.0f;
          float* c = reinterpret_cast<float*>(static_cast<char*>(b.out) + off);
          BENCH_CUBLAS(cublasSgeam(handle_, CUBLAS_OP_T, CUBLAS_OP_N, int(s.rows), int(s.cols), &one,
                                   reinterpret_cast<const float*>(static_cast<char*>(b.in) + off), int(s.cols),
                                   &zero, c, int(s.rows), c, int(s.rows)));
        } else {
          const double one = 1.0, zero = 0.0;
          double* c = reinterpret_cast<double*>(static_cast<char*>(b.out) + off);
          BENCH_CUBLAS(cublasDgeam(handle_, CUBLAS_OP_T, CUBLAS_OP_N, int(s.rows), int(s.cols), &one,
                                   reinterpret_cast<const double*>(static_cast<char*>(b.in) + off), int(s.cols),
                                   &zero, c, int(s.rows), c, int(s.rows)));
        }
      }
    });
  }

  // The production paths for one shape: auto first, then every path that takes it.
  void Workload(const std::string& title, const std::vector<Shape>& shapes) {
    Table t({"variant", "shape", "time", "GB/s", "% of copy", "vs cuBLAS geam"});
    for (const Shape& s : shapes) {
      Buffers b = Alloc(static_cast<size_t>(s.batch * s.rows * s.cols * s.eb));
      const double peer = TimeGeam(s, b);
      if (peer > 0) Row(t, s.eb == 4 ? "cublasSgeam" : "cublasDgeam", s, peer, peer);
      for (const TransposePath p : histd::cuda::AllTransposePaths()) {
        if (s.rows == 1 || s.cols == 1) {  // tiles on a vector: seconds of nothing learnt
          if (p != TransposePath::kAuto && p != TransposePath::kStridedCopy) continue;
        }
        if (p == TransposePath::kScalarTile32 && (s.rows == 1 || s.cols == 1)) continue;  // seconds, nothing learnt
        const double ms = TimePath(s, b, p);
        if (ms < 0) continue;
        std::string name = p == TransposePath::kAuto ? "histd transpose (auto)" : std::string("  path ") +
                                                                                    histd::cuda::TransposePathName(p);
        Row(t, name, s, ms, peer);
      }
      Free(b);
    }
    t.Print(title);
  }

  void SeedTable(int64_t n) {
    Table t({"variant", "shape", "time", "GB/s", "% of copy", "vs cublasSgeam", "vs previous step"});
    const Shape s{1, n, n, 4};
    Buffers b = Alloc(static_cast<size_t>(n * n * 4));
    const double peer = TimeGeam(s, b);
    double prev = -1;
    for (const SeedTranspose v : {SeedTranspose::kCopy, SeedTranspose::kCopyShared, SeedTranspose::kNaive,
                                  SeedTranspose::kCoalesced, SeedTranspose::kPadded, SeedTranspose::kDiagonal}) {
      const double ms = MedianMs([&](cudaStream_t st) {
        if (!histd::cuda::RunSeedTranspose(v, static_cast<const float*>(b.in), static_cast<float*>(b.out), n, n, st)
                 .ok())
          std::exit(2);
      });
      const double gbs = s.Bytes() / (ms * 1e6);
      const bool transpose = v != SeedTranspose::kCopy && v != SeedTranspose::kCopyShared;
      t.Add({histd::cuda::SeedTransposeName(v), s.Name(), Fmt("%.3f ms", ms), Fmt("%.0f", gbs),
             Fmt("%.1f%%", 100.0 * gbs / copy_gbs_), Fmt("%.3fx", peer / ms),
             transpose && prev > 0 && v != SeedTranspose::kNaive ? Fmt("%.2fx", prev / ms) : std::string("-")});
      if (transpose) prev = ms;
    }
    const double ms = TimePath(s, b, TransposePath::kAuto);
    t.Add({"histd transpose (auto)", s.Name(), Fmt("%.3f ms", ms), Fmt("%.0f", s.Bytes() / (ms * 1e6)),
           Fmt("%.1f%%", 100.0 * s.Bytes() / (ms * 1e6) / copy_gbs_), Fmt("%.3fx", peer / ms), Fmt("%.2fx", prev / ms)});
    t.Add({"cublasSgeam", s.Name(), Fmt("%.3f ms", peer), Fmt("%.0f", s.Bytes() / (peer * 1e6)),
           Fmt("%.1f%%", 100.0 * s.Bytes() / (peer * 1e6) / copy_gbs_), "1.000x", "-"});
    Free(b);
    t.Print(Fmt("Seed path (seeds/000_*), float32 %lld x %lld", (long long)n, (long long)n));
  }

 private:
  double copy_gbs_;
  cublasHandle_t handle_;
};

}  // namespace

int main() {
  std::printf("# Transpose benchmark\n\nDevice: %s\n", histd::bench::DeviceLine().c_str());
  const double copy = histd::bench::CopyBandwidthGBs();
  std::printf("Device copy (cudaMemcpy D2D, 1 GiB, read + write): %.0f GB/s\n", copy);
  cublasHandle_t handle;
  BENCH_CUBLAS(cublasCreate(&handle));
  Bench bench(copy, handle);

  bench.SeedTable(4096);
  bench.SeedTable(8192);
  const int64_t kVec = int64_t{1} << 26;
  bench.Workload("float32 (4-byte) shapes", {{1, 4096, 4096, 4}, {1, 8192, 8192, 4}, {1, 16384, 16384, 4},
                                            {1, 16383, 16385, 4}, {1, 8192, 32768, 4}, {1, 32768, 8192, 4},
                                            {1, 1, kVec, 4}, {1, kVec, 1, 4}, {64, 1024, 1024, 4}});
  bench.Workload("1-byte elements (histogram bins)", {{64, 256, 8192, 1}, {1, 256, 8192, 1}, {1, 8192, 8192, 1}, {1, 16384, 16384, 1},
                                                      {1, 16383, 16385, 1}, {1, 8192, 32768, 1},
                                                      {1, 1, kVec, 1}, {1, kVec, 1, 1}});
  bench.Workload("8-byte elements", {{1, 8192, 8192, 8}, {1, 8191, 8193, 8}, {1, 4096, 16384, 8}});
  BENCH_CUBLAS(cublasDestroy(handle));
  return 0;
}
