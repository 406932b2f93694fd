// Seed 004's row-partition reduce and scan (see row_partition.h). The per-block work reuses
// the production building blocks: SliceReduce for GPU_Reduce, TileScan for GPU_Scan.
#include "experiments/reduce_scan/row_partition.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "absl/strings/str_format.h"
#include "kernels/common/cuda_status.h"
#include "kernels/reduce_scan/agent_reduce.cuh"
#include "kernels/reduce_scan/agent_scan.cuh"
#include "kernels/reduce_scan/device_query.h"
#include "kernels/reduce_scan/tuning.h"

namespace histd::cuda {
namespace {

using reduce_scan::SumOp;
using Tuning = reduce_scan::ScanTuningFor<float>::type;
using Tile = reduce_scan::TileScan<float, double, Tuning>;
constexpr uint64_t kMaxRows = 1000;  // the seed keeps r <= 1000 so that one block sums them
constexpr uint64_t kRowsPerSm = 4;
constexpr uint64_t kVectorsPerTile = Tile::kTile / Tile::V;

struct Partition {
  uint64_t tiles = 0, rows = 0, tiles_per_row = 0;
};

absl::StatusOr<Partition> MakePartition(uint64_t n) {
  absl::StatusOr<int> sms = CurrentDeviceSmCount();
  if (!sms.ok()) return sms.status();
  Partition p;
  p.tiles = (n + Tile::V - 1 + Tile::kTile - 1) / Tile::kTile;  // covers the view, any shift
  const uint64_t want = std::min<uint64_t>(kMaxRows, uint64_t(*sms) * kRowsPerSm);
  p.tiles_per_row = (p.tiles + want - 1) / want;
  p.rows = (p.tiles + p.tiles_per_row - 1) / p.tiles_per_row;
  return p;
}

// GPU_SumsToStarts: exclusive scan of r <= 1024 row sums by one block.
__global__ void __launch_bounds__(1024) SumsToStartsKernel(const double* sums, uint32_t rows,
                                                           double* starts) {
  using namespace reduce_scan;
  __shared__ double warp_total[32];
  const unsigned tid = threadIdx.x, warp = tid / kWarp;
  const double v = tid < rows ? sums[tid] : 0.0;
  const double incl = WarpInclusiveSum(v);
  double excl = ShflUp(incl, 1);
  if (LaneId() == 0) excl = 0.0;
  if (LaneId() == kWarp - 1) warp_total[warp] = incl;
  __syncthreads();
  double run = 0.0;
  for (unsigned w = 0; w < warp; ++w) run = run + warp_total[w];
  if (tid < rows) starts[tid] = run + excl;
}

// GPU_Scan: block k rescans tiles [k * tiles_per_row, +tiles_per_row) from starts[k].
__global__ void __launch_bounds__(Tuning::kThreads)
    RowScanKernel(const float* __restrict__ in, float* __restrict__ out, uint64_t n,
                  uint64_t tiles_per_row, uint64_t tiles, const double* __restrict__ starts,
                  bool inclusive) {
  __shared__ Tile::Shared sh;
  const int shift = reduce_scan::ShiftOf(in);
  double start = starts != nullptr ? starts[blockIdx.x] : 0.0;
  const uint64_t t0 = uint64_t(blockIdx.x) * tiles_per_row;
  const uint64_t t1 = std::min(tiles, t0 + tiles_per_row);
  for (uint64_t t = t0; t < t1; ++t) {
    Tile tile;
    tile.Load(in, n, shift, t);
    tile.ScanLocal(sh);
    tile.Store(out, n, shift, t, start, inclusive, nullptr);  // f32 -> f32: no stage
    start = start + tile.aggregate;
    __syncthreads();  // sh is rewritten by the next tile
  }
}

// GPU_Reduce: row k's sum (double) into sums[k]; with a single row, the float result.
absl::Status LaunchRowSums(const Partition& p, const RowPartitionArgs& a, double* sums,
                           float* single, cudaStream_t stream) {
  using RT = reduce_scan::ReduceTuning;
  reduce_scan::SegmentReduceKernel<float, SumOp, RT><<<static_cast<unsigned>(p.rows), RT::kThreads, 0, stream>>>(
      a.input, 0, a.n, static_cast<uint32_t>(p.rows), p.tiles_per_row * kVectorsPerTile, single, sums);
  return CheckLaunch("GPU_Reduce (SegmentReduceKernel)", stream);
}

absl::Status CheckArgs(const char* what, const RowPartitionArgs& a) {
  if (a.n > 0 && (a.input == nullptr || a.output == nullptr)) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: null pointer", what));
  }
  if (reinterpret_cast<uintptr_t>(a.input) % 4 != 0 || reinterpret_cast<uintptr_t>(a.output) % 4 != 0) {
    return absl::InvalidArgumentError(absl::StrFormat("%s: pointers must be 4-byte aligned", what));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status RowPartitionReduce::can_implement(const RowPartitionArgs& args) {
  if (args.output == nullptr) return absl::InvalidArgumentError("row-partition reduce: null output");
  return CheckArgs("row-partition reduce", args);
}

absl::StatusOr<size_t> RowPartitionReduce::get_workspace_size(const RowPartitionArgs& args) {
  HISTD_RETURN_IF_ERROR(can_implement(args));
  absl::StatusOr<Partition> p = MakePartition(args.n);
  if (!p.ok()) return p.status();
  return p->rows * sizeof(double);
}

absl::Status RowPartitionReduce::run(const RowPartitionArgs& args, void* workspace,
                                     size_t workspace_bytes, cudaStream_t stream) {
  HISTD_RETURN_IF_ERROR(can_implement(args));
  if (args.n == 0) {
    HISTD_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(args.output, 0, sizeof(float), stream));
    return absl::OkStatus();
  }
  absl::StatusOr<Partition> p = MakePartition(args.n);
  if (!p.ok()) return p.status();
  HISTD_RETURN_IF_ERROR(reduce_scan::CheckWorkspace("row-partition reduce", workspace,
                                                    workspace_bytes, p->rows * sizeof(double)));
  auto* sums = static_cast<double*>(workspace);
  HISTD_RETURN_IF_ERROR(LaunchRowSums(*p, args, sums, args.output, stream));
  if (p->rows == 1) return absl::OkStatus();
  reduce_scan::FinalizeKernel<double, float, SumOp, 256><<<1, 256, 0, stream>>>(
      sums, static_cast<uint32_t>(p->rows), args.output);
  return CheckLaunch("GPU_SumRows (FinalizeKernel)", stream);
}

absl::Status RowPartitionScan::can_implement(const RowPartitionArgs& args) {
  HISTD_RETURN_IF_ERROR(CheckArgs("row-partition scan", args));
  const auto in = reinterpret_cast<uintptr_t>(args.input), out = reinterpret_cast<uintptr_t>(args.output);
  if (args.n > 0 && in < out + 4 * args.n && out < in + 4 * args.n) {
    return absl::InvalidArgumentError("row-partition scan: output overlaps the input");
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> RowPartitionScan::get_workspace_size(const RowPartitionArgs& args) {
  HISTD_RETURN_IF_ERROR(can_implement(args));
  absl::StatusOr<Partition> p = MakePartition(args.n);
  if (!p.ok()) return p.status();
  return 2 * p->rows * sizeof(double);
}

absl::Status RowPartitionScan::run(const RowPartitionArgs& args, void* workspace,
                                   size_t workspace_bytes, cudaStream_t stream) {
  HISTD_RETURN_IF_ERROR(can_implement(args));
  if (args.n == 0) return absl::OkStatus();
  absl::StatusOr<Partition> p = MakePartition(args.n);
  if (!p.ok()) return p.status();
  HISTD_RETURN_IF_ERROR(reduce_scan::CheckWorkspace("row-partition scan", workspace,
                                                    workspace_bytes, 2 * p->rows * sizeof(double)));
  auto* sums = static_cast<double*>(workspace);
  double* starts = nullptr;
  if (p->rows > 1) {
    starts = sums + p->rows;
    HISTD_RETURN_IF_ERROR(LaunchRowSums(*p, args, sums, nullptr, stream));
    SumsToStartsKernel<<<1, 1024, 0, stream>>>(sums, static_cast<uint32_t>(p->rows), starts);
    HISTD_RETURN_IF_ERROR(CheckLaunch("GPU_SumsToStarts", stream));
  }
  RowScanKernel<<<static_cast<unsigned>(p->rows), Tuning::kThreads, 0, stream>>>(
      args.input, args.output, args.n, p->tiles_per_row, p->tiles, starts, args.inclusive);
  return CheckLaunch("GPU_Scan (RowScanKernel)", stream);
}

}  // namespace histd::cuda
