// Reduce and scan on the GPU against CUB and the device-copy floor, all in one process.
//
// Tables: float32 sum reduce and inclusive scan at n = 2^20, 2^24, 2^28 (production,
// tuning alternatives, seed 004's row partition, CUB); seed 002's seven reduction steps on
// int32 (GB/s and speed-up over the step before); row / column reduce (and CDF scans) of a
// resident 256 x 8192 uint8 histogram against a copy of the same bytes.
// Every op is captured `iters` times into a CUDA graph and the graph's replays are timed
// (median of 15), so host launch overhead stays out of small sizes for us and CUB alike.
// 2^20 and 2^24 inputs stay in the 50 MB L2 between replays; 2^28 (1 GiB) does not.
// Production rows run DeviceReduce, DeviceScan and DeviceProjection; the tuning alternatives,
// projection shapes and seed reproductions are experiments (experiments/reduce_scan/).
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include <cstdio>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "bench/bench_util.cuh"
#include "experiments/reduce_scan/projection_variants.h"
#include "experiments/reduce_scan/reduce_scan_tunings.cuh"
#include "experiments/reduce_scan/row_partition.h"
#include "experiments/reduce_scan/seed_reduce.h"
#include "kernels/reduce_scan/projection.h"
#include "kernels/reduce_scan/reduce.h"
#include "kernels/reduce_scan/scan.h"
#include "kernels/reduce_scan/tuning.h"

namespace {

using histd::DType;
using histd::Dim;
using histd::ReduceOp;
using namespace histd::bench;
namespace hc = histd::cuda;
namespace rs = histd::cuda::reduce_scan;


using Op = std::function<void(cudaStream_t)>;

// Microseconds per op: `iters` ops captured in one graph, median of the graph's replays.
double TimeUs(const Op& op, int iters, cudaStream_t s) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  BENCH_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < iters; ++i) op(s);
  BENCH_CUDA(cudaStreamEndCapture(s, &graph));
  BENCH_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  const double ms = MedianMs([&](cudaStream_t st) { BENCH_CUDA(cudaGraphLaunch(exec, st)); }, s, 15, 3);
  BENCH_CUDA(cudaGraphExecDestroy(exec));
  BENCH_CUDA(cudaGraphDestroy(graph));
  return ms * 1000.0 / iters;
}

int ItersFor(uint64_t bytes) { return static_cast<int>(std::max<uint64_t>(1, (uint64_t{256} << 20) / bytes)); }

void* Alloc(size_t bytes) {
  void* p = nullptr;
  BENCH_CUDA(cudaMalloc(&p, std::max<size_t>(bytes, 16)));
  return p;
}

__global__ void FillF32(float* p, uint64_t n) {
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x) {
    const uint32_t h = static_cast<uint32_t>((i * 0x9E3779B97F4A7C15ull) >> 32);
    p[i] = static_cast<float>(h) * (2.0f / 4294967296.0f) - 1.0f;
  }
}
__global__ void FillBytes(uint8_t* p, uint64_t n) {
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x) {
    p[i] = static_cast<uint8_t>((i * 0x9E3779B97F4A7C15ull) >> 56);
  }
}

// Workspace holder: grows, never shrinks.
struct Scratch {
  void* p = nullptr;
  size_t bytes = 0;
  void* Get(size_t need) {
    if (need > bytes) {
      if (p) BENCH_CUDA(cudaFree(p));
      p = Alloc(need);
      bytes = need;
    }
    return p;
  }
};

struct Row {
  std::string variant;
  uint64_t n;
  double us;
};

// One table per primitive: GB/s counts `bytes_per_elem` per element; the CUB row of the same
// n is the ratio's reference.
void PrintTable(const std::string& title, const std::vector<Row>& rows, double bytes_per_elem,
                double copy_gbs, const std::string& cub_name) {
  Table t({"variant", "n", "time (us)", "GB/s", "% of copy", "x CUB"});
  for (const Row& r : rows) {
    double cub_us = 0;
    for (const Row& c : rows) if (c.n == r.n && c.variant == cub_name) cub_us = c.us;
    const double gbs = r.n * bytes_per_elem / (r.us * 1e3);
    t.Add({r.variant, Fmt("2^%d", __builtin_ctzll(r.n)), Fmt("%.2f", r.us), Fmt("%.0f", gbs),
           Fmt("%.1f%%", 100.0 * gbs / copy_gbs), cub_us > 0 ? Fmt("%.3f", cub_us / r.us) : "-"});
  }
  t.Print(title);
}

// The production op, or an experiment with a forced tuning, through its lifecycle.
template <typename Api, typename Args>
Op ViaApi(const Args& a, Scratch& ws) {
  BENCH_OK(Api::can_implement(a));
  void* w = ws.Get(Api::get_workspace_size(a));
  return [=](cudaStream_t s) { BENCH_OK(Api::run(a, w, s)); };
}

template <typename Tuning, bool kFinalizePdl = true>
Op OurReduceF32(const float* in, uint64_t n, float* out, Scratch& ws) {
  return ViaApi<hc::ReduceWithTuning<float, Tuning, kFinalizePdl>>(
      hc::ReduceArgs{in, DType::kF32, 1, n, ReduceOp::kSum, Dim::kAll, out}, ws);
}

template <typename Tuning>
Op OurScanF32(const float* in, uint64_t n, float* out, Scratch& ws) {
  return ViaApi<hc::ScanWithTuning<float, Tuning>>(hc::ScanArgs{in, DType::kF32, 1, n, true, Dim::kAll, out}, ws);
}

// Any dtype / dimension with an explicit scan tuning.
template <typename T, typename Tuning, bool kAllowWarpRows = true>
Op TunedScan(const hc::ScanArgs& a, Scratch& ws) {
  return ViaApi<hc::ScanWithTuning<T, Tuning, kAllowWarpRows>>(a, ws);
}

}  // namespace

int main() {
  cudaStream_t s;
  BENCH_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const double copy = CopyBandwidthGBs();
  std::printf("## reduce_scan benchmark\n\nDevice: %s\n\nDevice copy (1 GiB D2D, read + write): %.0f GB/s\n",
              DeviceLine().c_str(), copy);

  const uint64_t kMax = uint64_t{1} << 28;
  float* fin = static_cast<float*>(Alloc(kMax * 4));
  float* fout = static_cast<float*>(Alloc(kMax * 4));
  FillF32<<<4096, 256, 0, s>>>(fin, kMax);
  BENCH_CUDA(cudaStreamSynchronize(s));
  Scratch ws, cub_ws;
  const uint64_t sizes[] = {uint64_t{1} << 20, uint64_t{1} << 24, kMax};

  // ---- reduce, float32 sum ----
  std::vector<Row> red;
  for (uint64_t n : sizes) {
    const int it = ItersFor(n * 4);
    size_t cub_bytes = 0;
    BENCH_CUDA(cub::DeviceReduce::Sum(nullptr, cub_bytes, fin, fout, static_cast<int>(n), s));
    void* cw = cub_ws.Get(cub_bytes);
    red.push_back({"CUB DeviceReduce::Sum", n, TimeUs([&](cudaStream_t st) {
                     BENCH_CUDA(cub::DeviceReduce::Sum(cw, cub_bytes, fin, fout, static_cast<int>(n), st)); }, it, s)});
    red.push_back({"DeviceReduce (256 thr x 8 vec, 8 blk/SM)", n,
                   TimeUs(ViaApi<hc::DeviceReduce>(hc::ReduceArgs{fin, DType::kF32, 1, n, ReduceOp::kSum, Dim::kAll, fout}, ws), it, s)});
    red.push_back({"  same, finalize without PDL", n, TimeUs(OurReduceF32<rs::ReduceTuning, false>(fin, n, fout, ws), it, s)});
    red.push_back({"  tuning 256 x 4 vec, 4 blk/SM (former default)", n, TimeUs(OurReduceF32<rs::ReduceTuningT<256, 4, 4>>(fin, n, fout, ws), it, s)});
    red.push_back({"  tuning 256 x 16 vec, 4 blk/SM", n, TimeUs(OurReduceF32<rs::ReduceTuningT<256, 16, 4>>(fin, n, fout, ws), it, s)});
    red.push_back({"  tuning 256 x 8 vec, 4 blk/SM", n, TimeUs(OurReduceF32<rs::ReduceTuningT<256, 8, 4>>(fin, n, fout, ws), it, s)});
    red.push_back({"  tuning 256 x 4 vec, 8 blk/SM", n, TimeUs(OurReduceF32<rs::ReduceTuningT<256, 4, 8>>(fin, n, fout, ws), it, s)});
    red.push_back({"  tuning 512 x 4 vec, 2 blk/SM", n, TimeUs(OurReduceF32<rs::ReduceTuningT<512, 4, 2>>(fin, n, fout, ws), it, s)});
    red.push_back({"seed 004 row partition (r <= 1000)", n,
                   TimeUs(ViaApi<hc::RowPartitionReduce>(hc::RowPartitionArgs{fin, n, fout, true}, ws), it, s)});
  }
  PrintTable("Reduce: float32 sum (GB/s = bytes read)", red, 4.0, copy, "CUB DeviceReduce::Sum");

  // ---- scan, float32 inclusive sum ----
  std::vector<Row> scan;
  for (uint64_t n : sizes) {
    const int it = ItersFor(n * 8);
    size_t cub_bytes = 0;
    BENCH_CUDA(cub::DeviceScan::InclusiveSum(nullptr, cub_bytes, fin, fout, static_cast<int>(n), s));
    void* cw = cub_ws.Get(cub_bytes);
    scan.push_back({"CUB DeviceScan::InclusiveSum", n, TimeUs([&](cudaStream_t st) {
                      BENCH_CUDA(cub::DeviceScan::InclusiveSum(cw, cub_bytes, fin, fout, static_cast<int>(n), st)); }, it, s)});
    scan.push_back({"DeviceScan inclusive (chained 512 x 32, min 2, reduce first, streaming)", n,
                    TimeUs(ViaApi<hc::DeviceScan>(hc::ScanArgs{fin, DType::kF32, 1, n, true, Dim::kAll, fout}, ws), it, s)});
    scan.push_back({"DeviceScan exclusive", n,
                    TimeUs(ViaApi<hc::DeviceScan>(hc::ScanArgs{fin, DType::kF32, 1, n, false, Dim::kAll, fout}, ws), it, s)});
    // ScanTuningT<threads, items, min blocks per SM, reduce first>
    scan.push_back({"  grouped 128 x 24, min 8, reduce first (former default)", n, TimeUs(OurScanF32<rs::ScanTuningT<128, 24, 8, true>>(fin, n, fout, ws), it, s)});
    scan.push_back({"  f32 work 128 x 24, min 5, scan first", n, TimeUs(OurScanF32<rs::ScanTuningT<128, 24, 5, false>>(fin, n, fout, ws), it, s)});
    scan.push_back({"  f32 work 128 x 32, min 6, reduce first", n, TimeUs(OurScanF32<rs::ScanTuningT<128, 32, 6, true>>(fin, n, fout, ws), it, s)});
    scan.push_back({"  f32 work 256 x 24, min 4, reduce first", n, TimeUs(OurScanF32<rs::ScanTuningT<256, 24, 4, true>>(fin, n, fout, ws), it, s)});
    // Chained look-back (chained_prefix.cuh): CUB-style per-tile windows, left-fold prefixes.
    // ScanTuningT<threads, items, min blocks per SM, reduce first, chained>
    scan.push_back({"  chained 128 x 24, min 8, reduce first", n, TimeUs(OurScanF32<rs::ScanTuningT<128, 24, 8, true, true>>(fin, n, fout, ws), it, s)});
    scan.push_back({"  chained 128 x 24, min 5, scan first", n, TimeUs(OurScanF32<rs::ScanTuningT<128, 24, 5, false, true>>(fin, n, fout, ws), it, s)});
    scan.push_back({"  chained 128 x 32, min 6, reduce first", n, TimeUs(OurScanF32<rs::ScanTuningT<128, 32, 6, true, true>>(fin, n, fout, ws), it, s)});
    scan.push_back({"  chained 256 x 24, min 4, reduce first", n, TimeUs(OurScanF32<rs::ScanTuningT<256, 24, 4, true, true>>(fin, n, fout, ws), it, s)});
    scan.push_back({"  chained 256 x 16, min 4, reduce first", n, TimeUs(OurScanF32<rs::ScanTuningT<256, 16, 4, true, true>>(fin, n, fout, ws), it, s)});
    scan.push_back({"  chained 256 x 32, min 3, reduce first", n, TimeUs(OurScanF32<rs::ScanTuningT<256, 32, 3, true, true>>(fin, n, fout, ws), it, s)});
    scan.push_back({"  chained 512 x 16, min 2, reduce first", n, TimeUs(OurScanF32<rs::ScanTuningT<512, 16, 2, true, true>>(fin, n, fout, ws), it, s)});
    // ScanTuningT<..., ticket, look-back windows, streaming (.cs) loads and stores>
    scan.push_back({"  chained 128 x 32, min 6, reduce first, streaming", n, TimeUs(OurScanF32<rs::ScanTuningT<128, 32, 6, true, true, true, 16, true>>(fin, n, fout, ws), it, s)});
    scan.push_back({"  chained 256 x 32, min 3, reduce first, streaming", n, TimeUs(OurScanF32<rs::ScanTuningT<256, 32, 3, true, true, true, 16, true>>(fin, n, fout, ws), it, s)});
    scan.push_back({"  chained 256 x 24, min 4, reduce first, streaming", n, TimeUs(OurScanF32<rs::ScanTuningT<256, 24, 4, true, true, true, 16, true>>(fin, n, fout, ws), it, s)});
    scan.push_back({"  chained 256 x 48, min 2, reduce first, streaming", n, TimeUs(OurScanF32<rs::ScanTuningT<256, 48, 2, true, true, true, 16, true>>(fin, n, fout, ws), it, s)});
    scan.push_back({"  chained 384 x 32, min 2, reduce first, streaming", n, TimeUs(OurScanF32<rs::ScanTuningT<384, 32, 2, true, true, true, 16, true>>(fin, n, fout, ws), it, s)});
    scan.push_back({"  chained 512 x 32, min 2, reduce first, streaming", n, TimeUs(OurScanF32<rs::ScanTuningT<512, 32, 2, true, true, true, 16, true>>(fin, n, fout, ws), it, s)});
    scan.push_back({"  chained 256 x 64, min 1, reduce first, streaming", n, TimeUs(OurScanF32<rs::ScanTuningT<256, 64, 1, true, true, true, 16, true>>(fin, n, fout, ws), it, s)});
    scan.push_back({"  chained 128 x 24, min 8, reduce first, 4 look-back windows", n, TimeUs(OurScanF32<rs::ScanTuningT<128, 24, 8, true, true, true, 4>>(fin, n, fout, ws), it, s)});
    scan.push_back({"  chained 128 x 24, min 8, reduce first, 64 look-back windows", n, TimeUs(OurScanF32<rs::ScanTuningT<128, 24, 8, true, true, true, 64>>(fin, n, fout, ws), it, s)});
    scan.push_back({"  chained 128 x 24, min 8, reduce first, blockIdx order (no ticket)", n, TimeUs(OurScanF32<rs::ScanTuningT<128, 24, 8, true, true, false>>(fin, n, fout, ws), it, s)});
    scan.push_back({"  chained 256 x 24, min 4, reduce first, blockIdx order (no ticket)", n, TimeUs(OurScanF32<rs::ScanTuningT<256, 24, 4, true, true, false>>(fin, n, fout, ws), it, s)});
    scan.push_back({"  grouped 128 x 24, min 8, reduce first, blockIdx order (no ticket)", n, TimeUs(OurScanF32<rs::ScanTuningT<128, 24, 8, true, false, false>>(fin, n, fout, ws), it, s)});
    scan.push_back({"  chained exclusive 128 x 24, min 8, reduce first", n, TimeUs(TunedScan<float, rs::ScanTuningT<128, 24, 8, true, true>>(
                                                                               hc::ScanArgs{fin, DType::kF32, 1, n, false, Dim::kAll, fout}, ws), it, s)});
    scan.push_back({"seed 004 row partition (reduce, sums-to-starts, scan)", n,
                    TimeUs(ViaApi<hc::RowPartitionScan>(hc::RowPartitionArgs{fin, n, fout, true}, ws), it, s)});
  }
  PrintTable("Scan: float32 inclusive sum (GB/s = bytes read + written)", scan, 8.0, copy,
             "CUB DeviceScan::InclusiveSum");

  // ---- seed 002: the seven steps on int32 ----
  {
    Table t({"step", "n", "time (us)", "GB/s", "x step before", "x step 1", "% of copy"});
    const int32_t* iin = reinterpret_cast<const int32_t*>(fin);  // the float bits as int32
    int32_t* iout = reinterpret_cast<int32_t*>(fout);
    for (uint64_t n : {uint64_t{1} << 22, kMax}) {
      const int it = ItersFor(n * 4);
      double first = 0, prev = 0;
      for (int st = 1; st <= hc::kSeedReduceSteps; ++st) {
        const auto step = static_cast<hc::SeedReduceStep>(st);
        const double us = TimeUs(ViaApi<hc::SeedReduce>(hc::SeedReduceArgs{step, iin, n, iout}, ws), it, s);
        if (st == 1) first = us;
        const double gbs = n * 4.0 / (us * 1e3);
        t.Add({hc::SeedReduceStepName(step), Fmt("2^%d", __builtin_ctzll(n)), Fmt("%.1f", us), Fmt("%.0f", gbs),
               st == 1 ? "-" : Fmt("%.2f", prev / us), Fmt("%.1f", first / us), Fmt("%.1f%%", 100 * gbs / copy)});
        prev = us;
      }
      size_t cub_bytes = 0;
      BENCH_CUDA(cub::DeviceReduce::Sum(nullptr, cub_bytes, iin, iout, static_cast<int>(n), s));
      void* cw = cub_ws.Get(cub_bytes);
      const double cub_us = TimeUs([&](cudaStream_t st) {
        BENCH_CUDA(cub::DeviceReduce::Sum(cw, cub_bytes, iin, iout, static_cast<int>(n), st)); }, it, s);
      const double ours = TimeUs(ViaApi<hc::DeviceReduce>(hc::ReduceArgs{iin, DType::kI32, 1, n, ReduceOp::kSum, Dim::kAll, fout}, ws), it, s);
      for (auto [name, us] : {std::pair<const char*, double>{"CUB DeviceReduce::Sum (int32)", cub_us},
                              {"DeviceReduce (int32 -> int64)", ours}}) {
        const double gbs = n * 4.0 / (us * 1e3);
        t.Add({name, Fmt("2^%d", __builtin_ctzll(n)), Fmt("%.1f", us), Fmt("%.0f", gbs), "-",
               Fmt("%.1f", first / us), Fmt("%.1f%%", 100 * gbs / copy)});
      }
    }
    t.Print("Seed 002: the reduction steps, int32 sum (each step's full reduction, all passes)");
  }

  // ---- a resident 256 x 8192 uint8 histogram ----
  {
    constexpr uint64_t kRows = 256, kCols = 8192, kBins = kRows * kCols, kHists = 64;
    uint8_t* hist = static_cast<uint8_t*>(Alloc(kBins * kHists));
    uint8_t* copy_dst = static_cast<uint8_t*>(Alloc(kBins * kHists));
    FillBytes<<<4096, 256, 0, s>>>(hist, kBins * kHists);
    BENCH_CUDA(cudaStreamSynchronize(s));
    Table t({"operation", "histograms per graph", "us per histogram", "GB/s (read + written)",
             "copy time / op time", "op GB/s / copy GB/s"});
    for (uint64_t count : {uint64_t{1}, kHists}) {
      const int it = count == 1 ? 64 : 1;  // one: the same resident histogram 64 times
      auto per_hist = [&](const std::function<void(uint64_t, cudaStream_t)>& op) {
        return TimeUs([&](cudaStream_t st) { for (uint64_t h = 0; h < count; ++h) op(h, st); }, it, s) / count;
      };
      const double copy_us = per_hist([&](uint64_t h, cudaStream_t st) {
        BENCH_CUDA(cudaMemcpyAsync(copy_dst + h * kBins, hist + h * kBins, kBins, cudaMemcpyDeviceToDevice, st)); });
      const double copy_gbs = 2.0 * kBins / (copy_us * 1e3);
      t.Add({"copy (2 MiB D2D)", Fmt("%llu", (unsigned long long)count), Fmt("%.2f", copy_us), Fmt("%.0f", copy_gbs), "1.00", "1.00"});
      struct Item { const char* name; Dim dim; bool scan; uint64_t out_bytes; };
      for (const Item& item : {Item{"row sums (collapse cols -> 256 x 1 u64; DeviceReduce = projection 64 x 8, PDL)", Dim::kCols, false, kRows * 8},
                               Item{"column sums (collapse rows -> 1 x 8192 u64)", Dim::kRows, false, kCols * 8},
                               Item{"CDF along rows (scan kCols -> u64)", Dim::kCols, true, kBins * 8},
                               Item{"CDF down columns (scan kRows -> u64)", Dim::kRows, true, kBins * 8},
                               Item{"flat scan of the same bytes (kAll -> u64)", Dim::kAll, true, kBins * 8}}) {
        std::vector<Op> ops;
        for (uint64_t h = 0; h < count; ++h) {
          if (item.scan) {
            ops.push_back(ViaApi<hc::DeviceScan>(hc::ScanArgs{hist + h * kBins, DType::kU8, kRows, kCols, true, item.dim, fout}, ws));
          } else {
            ops.push_back(ViaApi<hc::DeviceReduce>(hc::ReduceArgs{hist + h * kBins, DType::kU8, kRows, kCols, ReduceOp::kSum, item.dim, fout}, ws));
          }
        }
        const double us = per_hist([&](uint64_t h, cudaStream_t st) { ops[h](st); });
        const double gbs = (kBins + item.out_bytes) / (us * 1e3);
        t.Add({item.name, Fmt("%llu", (unsigned long long)count), Fmt("%.2f", us), Fmt("%.0f", gbs),
               Fmt("%.2f", copy_us / us), Fmt("%.2f", gbs / copy_gbs)});
      }
      // Variants: single-launch projections (DeviceProjection) and scan tunings, each over
      // the same `count` histograms.
      using PV = hc::ProjectionVariant;
      using U8 = uint8_t;
      using Maker = std::function<Op(uint64_t)>;
      auto proj = [&](Dim dim, PV v, bool pdl) -> Maker {
        return [=](uint64_t h) -> Op {
          const hc::ProjectionArgs a{hist + h * kBins, kRows, kCols, dim, reinterpret_cast<uint64_t*>(fout), pdl};
          BENCH_OK(hc::ProjectionWithVariant::can_implement(a, v));
          return [=](cudaStream_t st) { BENCH_OK(hc::ProjectionWithVariant::run(a, v, nullptr, st)); };
        };
      };
      auto scan_u8 = [&](Dim dim, auto tuning, auto warp_rows) -> Maker {
        using Tu = decltype(tuning);
        return [=, &ws](uint64_t h) -> Op {
          return TunedScan<U8, Tu, decltype(warp_rows)::value>(
              hc::ScanArgs{hist + h * kBins, DType::kU8, kRows, kCols, true, dim, fout}, ws);
        };
      };
      struct Variant { const char* name; uint64_t out_bytes; Maker make; };
      const Variant variants[] = {
          {"  row sums, projection 128 thr x 4 vec (1 launch)", kRows * 8, proj(Dim::kCols, PV::kDefault, false)},
          {"  row sums, projection 128 x 4, PDL", kRows * 8, proj(Dim::kCols, PV::kDefault, true)},
          {"  row sums, projection 256 x 2, PDL", kRows * 8, proj(Dim::kCols, PV::kRows256x2, true)},
          {"  row sums, projection 64 x 8, PDL", kRows * 8, proj(Dim::kCols, PV::kRows64x8, true)},
          {"  column sums, cluster 64 thr x 16 cols, 8 blocks (1 launch)", kCols * 8, proj(Dim::kRows, PV::kCols64x8, false)},
          {"  column sums, cluster 64 x 16, 8 blocks, PDL", kCols * 8, proj(Dim::kRows, PV::kCols64x8, true)},
          {"  column sums, cluster 64 x 16, 16 blocks, PDL", kCols * 8, proj(Dim::kRows, PV::kCols64x16, true)},
          {"  column sums, cluster 128 x 16, 8 blocks, PDL", kCols * 8, proj(Dim::kRows, PV::kCols128x8, true)},
          {"  column sums, cluster 32 x 16, 8 blocks, PDL", kCols * 8, proj(Dim::kRows, PV::kCols32x8, true)},
          {"  column sums, strip 4 vec x 64 row lanes, 4 rows each (1 launch)", kCols * 8, proj(Dim::kRows, PV::kColsStrip4x64, false)},
          {"  column sums, strip 4 x 64, PDL", kCols * 8, proj(Dim::kRows, PV::kColsStrip4x64, true)},
          {"  column sums, strip 2 x 128 (256 blocks), PDL", kCols * 8, proj(Dim::kRows, PV::kColsStrip2x128, true)},
          {"  column sums, strip 4 x 32 (128 threads, 8 rows each), PDL", kCols * 8, proj(Dim::kRows, PV::kColsStrip4x32, true)},
          {"  column sums, strip 8 x 32 (64 blocks, 8 rows each), PDL", kCols * 8, proj(Dim::kRows, PV::kColsStrip8x32, true)},
          {"  column sums, strip 2 x 256 (512 threads, 1 row each), PDL", kCols * 8, proj(Dim::kRows, PV::kColsStrip2x256, true)},
          {"  column sums, strip 1 x 256 (512 blocks, 1 row each), PDL", kCols * 8, proj(Dim::kRows, PV::kColsStrip1x256, true)},
          {"  column sums, strip 8 x 128 (64 blocks of 1024 threads, 2 rows each), PDL", kCols * 8, proj(Dim::kRows, PV::kColsStrip8x128, true)},
          {"  column sums, strip 8 x 64 (64 blocks of 512 threads, 4 rows each), PDL", kCols * 8, proj(Dim::kRows, PV::kColsStrip8x64, true)},
          {"  column sums, packed 2 x 128 (256 blocks, shared-memory combine), PDL", kCols * 8, proj(Dim::kRows, PV::kColsPacked2x128, true)},
          {"  column sums, packed 4 x 64 (128 blocks, shared-memory combine), PDL", kCols * 8, proj(Dim::kRows, PV::kColsPacked4x64, true)},
          {"  column sums, packed 4 x 64, 4 loads in flight, PDL", kCols * 8, proj(Dim::kRows, PV::kColsPacked4x64U4, true)},
          {"  column sums, packed 8 x 32 (64 blocks), 8 loads in flight, PDL", kCols * 8, proj(Dim::kRows, PV::kColsPacked8x32U8, true)},
          {"  column sums, packed 2 x 128, 1 load in flight, PDL", kCols * 8, proj(Dim::kRows, PV::kColsPacked2x128U1, true)},
          {"  CDF along rows, chained 128 x 16", kBins * 8, scan_u8(Dim::kCols, rs::ScanTuningT<128, 16, 1, false, true>{}, std::true_type{})},
          {"  CDF along rows, block per row 128 x 64, reduce first", kBins * 8, scan_u8(Dim::kCols, rs::ScanTuningT<128, 64, 1, true, true>{}, std::false_type{})},
          {"  CDF along rows, block per row 256 x 32, reduce first", kBins * 8, scan_u8(Dim::kCols, rs::ScanTuningT<256, 32, 1, true, true>{}, std::false_type{})},
          {"  CDF along rows, 2 tiles per row 128 x 32, reduce first, chained", kBins * 8, scan_u8(Dim::kCols, rs::ScanTuningT<128, 32, 1, true, true>{}, std::false_type{})},
          {"  flat scan, chained 128 x 16", kBins * 8, scan_u8(Dim::kAll, rs::ScanTuningT<128, 16, 1, false, true>{}, std::true_type{})},
          {"  flat scan, chained 128 x 32, reduce first", kBins * 8, scan_u8(Dim::kAll, rs::ScanTuningT<128, 32, 1, true, true>{}, std::true_type{})},
          {"  flat scan, chained 256 x 32, reduce first", kBins * 8, scan_u8(Dim::kAll, rs::ScanTuningT<256, 32, 1, true, true>{}, std::true_type{})},
          {"  flat scan, grouped 128 x 32, reduce first", kBins * 8, scan_u8(Dim::kAll, rs::ScanTuningT<128, 32, 1, true, false>{}, std::true_type{})},
      };
      for (const Variant& v : variants) {
        std::vector<Op> ops;
        for (uint64_t h = 0; h < count; ++h) ops.push_back(v.make(h));
        const double us = per_hist([&](uint64_t h, cudaStream_t st) { ops[h](st); });
        const double gbs = (kBins + v.out_bytes) / (us * 1e3);
        t.Add({v.name, Fmt("%llu", (unsigned long long)count), Fmt("%.2f", us), Fmt("%.0f", gbs),
               Fmt("%.2f", copy_us / us), Fmt("%.2f", gbs / copy_gbs)});
      }
    }
    t.Print("Resident 256 x 8192 uint8 histogram (2 MiB): projections and CDFs vs a copy of its bytes");
    BENCH_CUDA(cudaFree(hist));
    BENCH_CUDA(cudaFree(copy_dst));
  }
  BENCH_CUDA(cudaFree(fin));
  BENCH_CUDA(cudaFree(fout));
  return 0;
}
