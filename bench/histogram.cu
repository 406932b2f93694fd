// Benchmark of the 2D capped histogram kernels (issue 3): one table per workload, Roulo
// style. Every variant, the naive global 32-bit atomics kernel and CUB's
// DeviceHistogram::HistogramEven run in this process on the same device buffers.
//
//   roulo     256 x 8192 bins, 2^20 samples per histogram, gaussian eye (8 x 64 bins) at the
//             centre + 10% uniform speckle, cap 255, 64 histograms per measurement
//   oddwidth  Roulo's cluster on 256 x 8000 bins: the fold loop's build for a column count
//             that is no power of two (naive, CUB and the production kernel only)
//   offcentre the same cluster with its eye at row 40, col 1500 (what a centred window misses)
//   uniform   every bin equally likely
//   single    every sample on bin (37, 5001)
//   service   1024 batches of 2^16 clustered samples, each for one of 1000 resident
//             histograms, in one launch
//   message   one launch of 1, 8 or 16 ingest messages of 1 MiB (2^18 samples, one histogram
//             each; and 8 all for one histogram), clustered and uniform: the daemon's batches (a staging buffer holds
//             8 MiB by default, so its launches are always this small)
// Arguments name the workloads to run (ceilings streaming roulo oddwidth offcentre uniform single service
// message);
// none runs them all.
// Floor: the device copy bandwidth measured here (read + write), over 4 MiB read + the bins
// written per histogram (2 MiB; service: 4 bytes read per sample). Bins are reset (untimed)
// before every repetition; the median of the repetitions is reported.
// Rows "cluster-resident N" are the cluster-resident experiment with config N of
// kClusterResidentConfigs: the whole histogram (or 1/passes of it) in the shared memory of
// a thread-block cluster, samples applied through distributed shared memory, one merge per
// (histogram, pass). A row marked FAILED could not launch on this device (error shown).
// "matches ref" compares the result of the last repetition with a CPU reference loop on
// the first histograms (service: on every batch of the first 8 histograms).
#include <cub/device/device_histogram.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "bench/bench_util.cuh"
#include "bench/histogram_ceilings.cuh"
#include "bench/histogram_timeline.cuh"
#include "bench/histogram_workloads.cuh"
#include "bench/launch_ceilings.cuh"
#include "experiments/histogram/cluster_resident_geometry.h"
#include "experiments/histogram/histogram_variants.h"
#include "experiments/histogram/roulo_variants.h"
#include "experiments/histogram/tuning_candidates.h"
#include "kernels/histogram/bucketed_layout.h"
#include "kernels/histogram/histogram_accumulate.h"
#include "kernels/histogram/tuning.h"

namespace hb = histd::bench;
namespace hc = histd::cuda;
namespace wl = histd::workload;

namespace {

constexpr uint32_t kRows = 256, kCols = 8192;
constexpr uint32_t kPerHist = 1u << 20;
constexpr int kHists = 64;
constexpr int kServiceHists = 1000, kServiceBatches = 1024;
constexpr uint32_t kBatch = 1u << 16;

struct Item {  // host copy of one batch: histogram, offset, count
  uint32_t hist;
  uint64_t offset, count;
  wl::ClusterSpec spec;
  uint64_t seed;
  int kind;  // 0 cluster, 1 uniform, 2 single bin
  uint32_t rows = 0, cols = 0;  // the histogram's shape (Setup's, set by Generate)
};

__global__ void GenerateKernel(uint32_t* samples, const Item* items, int n_items) {
  const Item& it = items[blockIdx.y];
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < it.count; i += uint64_t(gridDim.x) * blockDim.x) {
    uint32_t v = it.kind == 0 ? wl::ClusterSample(it.seed, i, it.rows, it.cols, it.spec)
               : it.kind == 1 ? wl::UniformSample(it.seed, i, it.rows * it.cols)
                              : 37u * it.cols + 5001u;
    samples[it.offset + i] = v;
  }
}

// Naive: one global 32-bit atomicAdd per sample, uncapped, into 32-bit bins.
__global__ void NaiveAtomicsKernel(const uint32_t* samples, const Item* items, uint32_t* bins32) {
  const Item& it = items[blockIdx.y];
  uint32_t* h = bins32 + uint64_t(it.hist) * it.rows * it.cols;
  const uint32_t* s = samples + it.offset;
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < it.count; i += uint64_t(gridDim.x) * blockDim.x)
    atomicAdd(&h[s[i]], 1u);
}

// Median ms of fn over reps, with `reset` (untimed) before each.
double TimeWithReset(const std::function<void()>& reset, const std::function<void()>& fn, int reps) {
  cudaEvent_t a, b;
  BENCH_CUDA(cudaEventCreate(&a));
  BENCH_CUDA(cudaEventCreate(&b));
  reset();
  fn();  // warm-up
  std::vector<float> ms;
  for (int r = 0; r < reps; ++r) {
    reset();
    BENCH_CUDA(cudaEventRecord(a));
    fn();
    BENCH_CUDA(cudaEventRecord(b));
    BENCH_CUDA(cudaEventSynchronize(b));
    BENCH_CUDA(cudaGetLastError());
    float t;
    BENCH_CUDA(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
  }
  BENCH_CUDA(cudaEventDestroy(a));
  BENCH_CUDA(cudaEventDestroy(b));
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

struct Setup {
  std::string name;
  std::vector<Item> items;
  int hists;                 // histograms the bins buffer holds
  uint32_t rows = kRows, cols = kCols;  // every histogram's shape
  uint64_t Bins() const { return uint64_t{rows} * cols; }
  uint64_t total = 0;
  uint32_t* d_samples = nullptr;
  Item* d_items = nullptr;
  uint8_t* d_bins = nullptr;
  bool service = false;
};

void Generate(Setup& s) {
  s.total = 0;
  uint64_t max_count = 0;
  for (auto& it : s.items) {
    it.rows = s.rows;
    it.cols = s.cols;
    it.offset = s.total;
    s.total += it.count;
    max_count = std::max(max_count, it.count);
  }
  BENCH_CUDA(cudaMalloc(&s.d_samples, s.total * 4));
  BENCH_CUDA(cudaMalloc(&s.d_items, s.items.size() * sizeof(Item)));
  BENCH_CUDA(cudaMemcpy(s.d_items, s.items.data(), s.items.size() * sizeof(Item), cudaMemcpyHostToDevice));
  BENCH_CUDA(cudaMalloc(&s.d_bins, s.hists * s.Bins()));
  GenerateKernel<<<dim3(unsigned((max_count + 255) / 256 < 4096 ? (max_count + 255) / 256 : 4096), unsigned(s.items.size())), 256>>>(
      s.d_samples, s.d_items, int(s.items.size()));
  BENCH_CUDA(cudaDeviceSynchronize());
}

void Release(Setup& s) {
  BENCH_CUDA(cudaFree(s.d_samples));
  BENCH_CUDA(cudaFree(s.d_items));
  BENCH_CUDA(cudaFree(s.d_bins));
}

// CPU reference on the histograms < check_hists; compares with the device bins.
bool MatchesReference(const Setup& s, int check_hists) {
  std::vector<uint8_t> want(check_hists * s.Bins(), 0), got(want.size());
  BENCH_CUDA(cudaMemcpy(got.data(), s.d_bins, got.size(), cudaMemcpyDeviceToHost));
  std::vector<uint32_t> buf;
  for (const Item& it : s.items) {
    if (int(it.hist) >= check_hists) continue;
    buf.resize(it.count);
    BENCH_CUDA(cudaMemcpy(buf.data(), s.d_samples + it.offset, it.count * 4, cudaMemcpyDeviceToHost));
    uint8_t* h = want.data() + it.hist * s.Bins();
    for (uint32_t v : buf)
      if (h[v] < 255) ++h[v];
  }
  return want == got;
}

struct Row {
  std::string variant;
  double ms;
  std::string exact;
  std::string matches;
};

void PrintTable(const Setup& s, const std::vector<Row>& rows, double naive_ms, double cub_ms_per_item,
                double copy_gbs) {
  const bool svc = s.service;
  const double units = svc ? 1.0 : s.hists;  // per histogram, or per launch
  const double floor_us = svc ? s.total * 4.0 / (copy_gbs * 1e3) : (4.0 * kPerHist + s.Bins()) / (copy_gbs * 1e3);
  hb::Table t({"variant", svc ? "us per launch" : "us per histogram", svc ? "G samples/s" : "samples/s",
               "input GB/s", "ratio to floor", "speed-up vs naive atomics", "speed-up vs CUB HistogramEven",
               "exact (design)", "matches CPU ref here"});
  const double cub_ms = cub_ms_per_item * s.items.size();
  for (const Row& r : rows) {
    if (r.ms <= 0) {  // failed to launch: no figures
      t.Add({r.variant, "-", "-", "-", "-", "-", "-", r.exact, r.matches});
      continue;
    }
    const double us = r.ms * 1e3 / units;
    const double sps = s.total / (r.ms * 1e-3);
    t.Add({r.variant, hb::Fmt("%.2f", us), svc ? hb::Fmt("%.1f", sps / 1e9) : hb::Fmt("%.3g", sps),
           hb::Fmt("%.0f", s.total * 4.0 / (r.ms * 1e6)), hb::Fmt("%.2f", us / floor_us),
           hb::Fmt("%.2fx", naive_ms / r.ms), hb::Fmt("%.1fx", cub_ms / r.ms), r.exact, r.matches});
  }
  t.Print(s.name + hb::Fmt(" (floor %.2f us", floor_us) + (svc ? " per launch)" : " per histogram)"));
}

void RunWorkload(Setup& s, double copy_gbs) {
  Generate(s);
  const uint64_t bins_bytes = s.hists * s.Bins();
  const int cub_bins = int(s.Bins());
  auto reset = [&] { BENCH_CUDA(cudaMemsetAsync(s.d_bins, 0, bins_bytes)); };
  const int check = s.service ? 8 : 2;
  const int reps = 9;
  std::vector<Row> rows;

  // Naive global 32-bit atomics (uncapped; the reference point of issue 3).
  uint32_t* bins32 = nullptr;
  BENCH_CUDA(cudaMalloc(&bins32, bins_bytes * 4));
  uint64_t max_count = 0;
  for (auto& it : s.items) max_count = std::max(max_count, it.count);
  const unsigned gx = unsigned(std::min<uint64_t>((max_count + 1023) / 1024, 1024));
  const double naive_ms = TimeWithReset([&] { BENCH_CUDA(cudaMemsetAsync(bins32, 0, bins_bytes * 4)); },
      [&] { NaiveAtomicsKernel<<<dim3(gx, unsigned(s.items.size())), 1024>>>(s.d_samples, s.d_items, bins32); }, reps);
  BENCH_CUDA(cudaFree(bins32));
  rows.push_back({"naive global 32-bit atomics (uncapped, 4-byte bins)", naive_ms, "no cap", "-"});

  // CUB HistogramEven, one call per batch, on the first 2 batches (it is ~1000x slower).
  int* counters = nullptr;
  BENCH_CUDA(cudaMalloc(&counters, s.Bins() * 4));
  size_t temp_bytes = 0;
  BENCH_CUDA(cub::DeviceHistogram::HistogramEven(nullptr, temp_bytes, (const int*)s.d_samples, counters,
                                                 cub_bins + 1, 0, cub_bins, int(s.items[0].count)));
  void* temp = nullptr;
  BENCH_CUDA(cudaMalloc(&temp, temp_bytes));
  const int cub_items = std::min<int>(2, int(s.items.size()));
  const double cub_ms = TimeWithReset([] {}, [&] {
    for (int i = 0; i < cub_items; ++i)
      BENCH_CUDA(cub::DeviceHistogram::HistogramEven(temp, temp_bytes, (const int*)(s.d_samples + s.items[i].offset),
                                                     counters, cub_bins + 1, 0, cub_bins, int(s.items[i].count)));
  }, 3);
  BENCH_CUDA(cudaFree(temp));
  BENCH_CUDA(cudaFree(counters));
  const double cub_ms_per_item = cub_ms / cub_items;
  rows.push_back({"CUB HistogramEven (int counters, per histogram; timed on 2)", cub_ms_per_item * s.items.size(),
                  "no cap", "-"});

  // Roulo's variants (one batch per histogram, on the talk's 256 x 8192 only).
  if (!s.service && s.rows == kRows && s.cols == kCols) {
    for (int v = 0; v < hc::kRouloVariantCount; ++v) {
      hc::RouloBatchArgs a;
      a.samples = s.d_samples;
      a.bins = s.d_bins;
      a.histograms = s.hists;
      a.samples_per_histogram = kPerHist;
      a.rows = kRows;
      a.cols = kCols;
      a.cap = 255;
      a.hint_row = kRows / 2;
      a.hint_window_cols = 1536;
      const auto rv = static_cast<hc::RouloVariant>(v);
      const double ms = TimeWithReset(reset, [&] { BENCH_OK(hc::RunRouloVariant(rv, a, nullptr)); }, reps);
      rows.push_back({hc::RouloVariantDescription(rv), ms, "no (soft cap)", MatchesReference(s, check) ? "yes" : "NO"});
    }
  }

  // The production kernel and its measured alternatives.
  std::vector<hc::HistogramWork> work;
  for (const Item& it : s.items)
    work.push_back({s.d_bins + it.hist * s.Bins(), s.rows, s.cols, 255, 0, it.offset, it.count, 0, 0, 0, 0});
  hc::HistogramWork* d_work;
  hc::HistogramOutflow* d_out;
  BENCH_CUDA(cudaMalloc(&d_work, work.size() * sizeof(work[0])));
  BENCH_CUDA(cudaMalloc(&d_out, work.size() * sizeof(hc::HistogramOutflow)));
  BENCH_CUDA(cudaMemcpy(d_work, work.data(), work.size() * sizeof(work[0]), cudaMemcpyHostToDevice));
  BENCH_CUDA(cudaMemset(d_out, 0, work.size() * sizeof(hc::HistogramOutflow)));
  struct Prod { std::string name; hc::HistogramVariantOptions o; };
  std::vector<Prod> prods;
  prods.push_back({hb::Fmt("production default (config %d)", histd::cuda::histogram::kProductionHotWindowCandidate), {}});
  hc::HistogramVariantOptions device_work;  // the A/B of the work list by value (bucketed launches)
  device_work.work_by_value = false;
  prods.push_back({"production default, work list read from device memory (not by value)", device_work});
  hc::HistogramVariantOptions contiguous;  // the A/B of interleaved slices (bucketed launches)
  contiguous.interleave_slices = false;
  prods.push_back({"production default, contiguous 16K-bin bucketed slices (not interleaved)", contiguous});
  hc::HistogramVariantOptions full_slices;  // the A/B of half-size slices (bucketed launches, few histograms)
  full_slices.bucket_slice_bins = 16384;
  prods.push_back({"production default, 16K-bin bucketed slices always (never half-size)", full_slices});
  for (int c = 0; c < histd::cuda::histogram::kHotWindowCandidateCount; ++c) {
    const auto& k = histd::cuda::histogram::kHotWindowCandidates[c];
    hc::HistogramVariantOptions o;
    o.strategy = hc::HistogramStrategy::kHotWindow;
    o.config = c;
    prods.push_back({hb::Fmt("exact config %d: %d thr x %d/SM, %uK-bin window, tile 2^%d, cluster %d%s", c, k.threads,
                             k.blocks_per_sm, k.window_bins / 1024, 31 - __builtin_clz(k.tile_samples), k.cluster,
                             k.defer_misses ? ", misses deferred" : ""), o});
    if (k.defer_misses) {  // cost split: + misses queued, + sorted and recorded, + folded
      o.bench_probe = 1;
      prods.push_back({hb::Fmt("probe: config %d without misses (WRONG result, cost split)", c), o});
      o.bench_probe = 8;
      prods.push_back({hb::Fmt("probe: config %d, full miss queues dropped (WRONG result, cost split)", c), o});
      o.bench_probe = 4;
      prods.push_back({hb::Fmt("probe: config %d, records not folded (WRONG result, cost split)", c), o});


    }
  }
  // The default with other deferral thresholds (Roulo's speckle is ~1 miss per 19 bins; the
  // default defers at 1 per 32), and the cost split at 1 per 64.
  const struct { uint32_t probe; const char* what; } split[] = {
      {0, ""}, {1, ", without misses"}, {8, ", full miss queues dropped"}, {4, ", records not folded"}};
  for (const auto& row : split) {
    hc::HistogramVariantOptions o;
    o.defer_bins_per_miss = 64;
    o.bench_probe = row.probe;
    prods.push_back({hb::Fmt("default deferring at >= 1 miss per 64 bins%s%s", row.what,
                             row.probe ? " (WRONG result, cost split)" : ""), o});
  }
  for (const uint32_t bins_per_miss : {16u, 256u}) {
    hc::HistogramVariantOptions o;
    o.defer_bins_per_miss = bins_per_miss;
    prods.push_back({hb::Fmt("default deferring at >= 1 miss per %u bins", bins_per_miss), o});
  }
  hc::HistogramVariantOptions guess;
  guess.miss_guess = 1;
  prods.push_back({"default, misses CAS guessing 0 first", guess});
  if (s.items.size() > 16) {  // large launches: smaller tiles keep fewer histograms' bins in L2 at once
    for (int log2 = 14; log2 <= 20; ++log2) {
      if (log2 == 18) continue;  // the default
      hc::HistogramVariantOptions t;
      t.tile_samples = 1u << log2;
      prods.push_back({hb::Fmt("default with 2^%d-sample tiles", log2), t});
    }
  }
  hc::HistogramVariantOptions fixed_tiles;
  fixed_tiles.tile_samples =
      histd::cuda::histogram::kHotWindowCandidates[histd::cuda::histogram::kProductionHotWindowCandidate].tile_samples;
  prods.push_back({"default with its fixed tile (not shrunk for small launches)", fixed_tiles});
  if (s.items.size() <= 16) {  // small launches: what each tile size and config gives
    for (int log2 = 12; log2 <= 17; ++log2) {
      hc::HistogramVariantOptions t;
      t.tile_samples = 1u << log2;
      prods.push_back({hb::Fmt("default with 2^%d-sample tiles", log2), t});
    }
    for (int c = 0; c < histd::cuda::histogram::kHotWindowCandidateCount; ++c) {
      hc::HistogramVariantOptions t;
      t.strategy = hc::HistogramStrategy::kHotWindow;
      t.config = c;
      t.tile_samples = histd::cuda::histogram::kHotWindowCandidates[c].tile_samples;
      prods.push_back({hb::Fmt("exact config %d with its fixed tile (not shrunk)", c), t});
    }
  }
  hc::HistogramVariantOptions g;
  g.strategy = hc::HistogramStrategy::kGlobalOnly;
  prods.push_back({"exact global CAS only (no window)", g});
  hc::HistogramVariantOptions bucketed;
  bucketed.strategy = hc::HistogramStrategy::kBucketed;
  prods.push_back({"bucketed: tiles sorted by 16K-bin slice, grid barrier, each slice counted on chip and merged once",
                   bucketed});
  for (int c = 1; c < histd::cuda::histogram::kBucketedCandidateCount; ++c) {
    bucketed.config = c;
    prods.push_back({hb::Fmt("bucketed config %d: %d threads x %d per SM", c,
                             histd::cuda::histogram::kBucketedCandidates[c].threads,
                             histd::cuda::histogram::kBucketedCandidates[c].blocks_per_sm),
                     bucketed});
  }
  namespace hg = histd::cuda::histogram;
  for (int c = 0; c < hg::kClusterResidentConfigCount; ++c) {
    const auto& k = hg::kClusterResidentConfigs[c];
    const uint32_t lane_bytes = k.lane == hg::ResidentLane::k8Cas ? 1 : k.lane == hg::ResidentLane::k16Gated ? 2 : 4;
    const uint32_t capacity = k.lane_smem_bytes / lane_bytes / hg::kResidentGranule * hg::kResidentGranule;
    const uint32_t passes = hg::ResidentGeometry::For(0, s.Bins(), k.cluster, capacity).passes;
    const char* lane = k.lane == hg::ResidentLane::k8Cas     ? "8-bit lanes, remote load+CAS"
                       : k.lane == hg::ResidentLane::k16Gated ? "16-bit lanes, remote read-gated RED"
                                                              : "32-bit lanes, remote RED";
    hc::HistogramVariantOptions o;
    o.cluster_resident = true;
    o.config = c;
    prods.push_back({hb::Fmt("cluster-resident %d: cluster %d x %d thr, ", c, k.cluster, k.threads) + lane +
                         hb::Fmt(", %d in flight%s%s, %u pass(es) of 2M bins", k.pending,
                                 k.warp_dedup ? ", warp-combined" : "", k.guess_zero ? ", CAS guessing 0" : "",
                                 passes), o});
  }
  hc::HistogramVariantOptions probe_misses, probe_merge;
  probe_misses.bench_probe = 1;
  probe_merge.bench_probe = 2;
  prods.push_back({"probe: default without applying misses (WRONG result, cost split)", probe_misses});
  prods.push_back({"probe: default without window merge (WRONG result, cost split)", probe_merge});
  // HISTD_BENCH_ROWS=substring keeps only the production rows whose name contains it (for
  // profiling one row under Nsight Compute). HISTD_BENCH_TIMELINE=1 prints where the first
  // row, the fixed-tile row and the bucketed rows spend their time (histogram_timeline.cuh).
  const char* row_filter = std::getenv("HISTD_BENCH_ROWS");
  for (const Prod& p : prods) {
    if (row_filter != nullptr && p.name.find(row_filter) == std::string::npos) continue;
    hc::HistogramAccumulateArgs args;
    args.work = d_work;
    args.host_work = work.data();  // as the daemon's engine passes it
    args.work_count = int(work.size());
    args.samples = s.d_samples;
    args.outflow = d_out;
    args.total_samples = s.total;
    args.options = p.o;
    using hc::HistogramVariant;
    BENCH_OK(HistogramVariant::can_implement(args, p.o));
    void* ws;
    BENCH_CUDA(cudaMalloc(&ws, std::max<size_t>(256, HistogramVariant::get_workspace_size(args, p.o))));
    // A variant that cannot launch here (e.g. a 16-block cluster the device does not
    // schedule) is reported and skipped, not fatal.
    const absl::Status first = HistogramVariant::run(args, p.o, ws, nullptr);
    const cudaError_t sync = cudaDeviceSynchronize();
    if (!first.ok() || sync != cudaSuccess) {
      const std::string why = !first.ok() ? std::string(first.message()) : cudaGetErrorName(sync);
      std::fprintf(stderr, "%s: %s\n", p.name.c_str(), why.c_str());
      (void)cudaGetLastError();  // a failed launch must not fail the next row's checks
      rows.push_back({p.name + " (FAILED: " + why + ")", 0.0, "-", "-"});
      BENCH_CUDA(cudaFree(ws));
      continue;
    }
    const double ms = TimeWithReset(reset, [&] { BENCH_OK(HistogramVariant::run(args, p.o, ws, nullptr)); }, reps);
    if ((&p == &prods.front() || p.name.find("its fixed tile") != std::string::npos ||
         p.name.find("bucketed") != std::string::npos) &&
        std::getenv("HISTD_BENCH_TIMELINE") != nullptr) {
      reset();
      if (hc::HistogramAccumulate::UsesBucketed(args)) {
        hb::PrintBucketedTimeline(s.name, args, p.o, ws, ms);
      } else {
        hb::PrintTileTimeline(s.name, args, p.o, ws, ms);
      }
    }
    BENCH_CUDA(cudaFree(ws));
    const bool probe = p.o.bench_probe != 0;
    rows.push_back({p.name, ms, probe ? "n/a (probe)" : "yes", MatchesReference(s, check) ? "yes" : "NO"});
  }
  BENCH_CUDA(cudaFree(d_work));
  BENCH_CUDA(cudaFree(d_out));
  PrintTable(s, rows, naive_ms, cub_ms_per_item, copy_gbs);
  Release(s);
}

Setup PerHistogramSetup(const std::string& name, int kind, wl::ClusterSpec spec) {
  Setup s;
  s.name = name;
  s.hists = kHists;
  for (int h = 0; h < kHists; ++h) s.items.push_back({uint32_t(h), 0, kPerHist, spec, 1000u + h, kind});
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> only(argv + 1, argv + argc);
  auto wanted = [&](const char* name) {
    return only.empty() || std::find(only.begin(), only.end(), name) != only.end();
  };
  BENCH_CUDA(cudaFree(nullptr));
  const double copy_gbs = hb::CopyBandwidthGBs();
  std::printf("# Histogram kernels (issue 3)\n\n%s; device copy %.0f GB/s (read + write)\n",
              hb::DeviceLine().c_str(), copy_gbs);
  if (only.empty() || wanted("ceilings")) {
    hb::L2Ceilings();
    hb::SharedLaneCeilings();
  }
  if (only.empty() || wanted("ceilings") || wanted("streaming")) hb::StreamingCeilings();
  const wl::ClusterSpec centre = wl::RouloCluster(kRows, kCols);
  if (wanted("roulo")) {
    Setup s = PerHistogramSetup("Roulo: 256x8192, 2^20 clustered samples/histogram, 64 histograms", 0, centre);
    RunWorkload(s, copy_gbs);
  }
  if (wanted("oddwidth")) {  // the fold loop's other build: a column count that is no power of two
    constexpr uint32_t kOddCols = 8000;
    Setup s = PerHistogramSetup("Roulo at 256x8000 (a width that is no power of two), 64 histograms", 0,
                                wl::RouloCluster(kRows, kOddCols));
    s.cols = kOddCols;
    RunWorkload(s, copy_gbs);
  }
  if (wanted("offcentre")) {
    wl::ClusterSpec off = centre;
    off.centre_row = 40;
    off.centre_col = 1500;
    Setup s = PerHistogramSetup("Roulo off-centre eye (row 40, col 1500)", 0, off);
    RunWorkload(s, copy_gbs);
  }
  if (wanted("uniform")) {
    Setup s = PerHistogramSetup("Uniform over all 2M bins", 1, centre);
    RunWorkload(s, copy_gbs);
  }
  if (wanted("single")) {
    Setup s = PerHistogramSetup("Single bin (37, 5001)", 2, centre);
    RunWorkload(s, copy_gbs);
  }
  if (wanted("service")) {
    Setup s;
    s.name = "Service: 1024 batches of 2^16 clustered samples over 1000 resident histograms, one launch";
    s.hists = kServiceHists;
    s.service = true;
    for (int b = 0; b < kServiceBatches; ++b) {
      const uint32_t h = uint32_t(wl::Mix64(b) % kServiceHists);
      const uint64_t hh = wl::Mix64(h + 77);
      const wl::ClusterSpec spec{float(hh % kRows), float((hh >> 20) % kCols), 8.f, 64.f, 0.1f};
      s.items.push_back({h, 0, kBatch, spec, 5000u + b, 0});
    }
    RunWorkload(s, copy_gbs);
  }
  if (wanted("message")) {  // the daemon's batches: a few 1 MiB messages per launch
    hb::LaunchCeilings();
    // messages x 1 MiB in one launch, one histogram each or (one producer's stream) all for one.
    auto run_messages = [&](int messages, int kind, bool one_histogram) {
      Setup s;
      s.name = one_histogram
                   ? hb::Fmt("Message: one launch of %d x 1 MiB messages, all for one histogram (2^18 %s samples each)",
                             messages, kind == 0 ? "clustered" : "uniform")
                   : hb::Fmt("Message: one launch of %d x 1 MiB message%s (2^18 %s samples each, one histogram "
                             "each)", messages, messages > 1 ? "s" : "", kind == 0 ? "clustered" : "uniform");
      s.hists = 16;  // the reference check reads the first 8
      s.service = true;
      for (int m = 0; m < messages; ++m) {
        const uint64_t seed = (one_histogram ? 9500u : 9000u) + 16 * m + kind;
        s.items.push_back({one_histogram ? 0u : uint32_t(m), 0, 1u << 18, centre, seed, kind});
      }
      RunWorkload(s, copy_gbs);
    };
    for (int messages : {1, 8, 16})
      for (int kind : {0, 1}) run_messages(messages, kind, false);
    for (int kind : {0, 1}) run_messages(8, kind, true);
  }
  return 0;
}
