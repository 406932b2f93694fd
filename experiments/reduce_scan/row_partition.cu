// Seed 004's row-partition reduce and scan (see row_partition.h). GPU_Reduce and GPU_SumRows
// are the production segment sum's kernels (run through dispatch/launch_typed.cuh, not built
// again here); GPU_Scan reuses the production TileScan in a kernel of its own.
#include "experiments/reduce_scan/row_partition.h"

#include <cuda_runtime.h>

#include <algorithm>

#include "absl/strings/str_format.h"
#include "kernels/common/cuda_status.h"
#include "kernels/reduce_scan/agent/agent_scan.cuh"
#include "kernels/reduce_scan/dispatch/dispatch_reduce.cuh"
#include "kernels/reduce_scan/dispatch/launch_typed.cuh"
#include "kernels/reduce_scan/op_checks.h"
#include "kernels/reduce_scan/tuning.h"
#include "kernels/reduce_scan/warp/warp_reduce.cuh"

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

Partition MakePartition(uint64_t n, int sms) {
  Partition p;
  p.tiles = (n + Tile::V - 1 + Tile::kTile - 1) / Tile::kTile;  // covers the view, any shift
  const uint64_t want = std::min<uint64_t>(kMaxRows, uint64_t(sms) * kRowsPerSm);
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

// GPU_Reduce (production's segment sum, one segment split in p.rows): row k's sum (double)
// into sums[k]; with a single row, the float result. The plan's finalize (GPU_SumRows) runs
// without PDL, as the seed's.
reduce_scan::ReducePlan SegmentPlan(const Partition& p, uint64_t n) {
  reduce_scan::ReducePlan plan;
  plan.kind = reduce_scan::ReducePlan::Kind::kSegments;
  plan.out_elems = 1;
  plan.segments = 1;
  plan.seg_len = n;
  plan.seg_stride = 0;
  plan.splits = static_cast<uint32_t>(p.rows);
  plan.per_split = p.tiles_per_row * kVectorsPerTile;
  plan.workspace_bytes = p.rows > 1 ? p.rows * sizeof(double) : 0;
  plan.dependent_launch = false;
  return plan;
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

size_t RowPartitionReduce::get_workspace_size(const RowPartitionArgs& args) {
  if (!can_implement(args).ok()) return 0;
  const Partition p = MakePartition(args.n, CurrentDeviceSmCountOr());
  return p.rows * sizeof(double);
}

absl::Status RowPartitionReduce::run(const RowPartitionArgs& args, void* workspace, cudaStream_t stream) {
  HISTD_RETURN_IF_ERROR(can_implement(args));
  if (args.n == 0) {
    HISTD_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(args.output, 0, sizeof(float), stream));
    return absl::OkStatus();
  }
  absl::StatusOr<int> sms = CurrentDeviceSmCount();
  if (!sms.ok()) return sms.status();
  const Partition partition = MakePartition(args.n, *sms);
  const Partition* p = &partition;
  HISTD_RETURN_IF_ERROR(reduce_scan::CheckWorkspace("row-partition reduce", workspace, p->rows * sizeof(double)));
  auto* sums = static_cast<double*>(workspace);
  const reduce_scan::ReducePlan plan = SegmentPlan(*p, args.n);
  HISTD_RETURN_IF_ERROR(reduce_scan::LaunchSumSegments<float>(plan, args.input, args.output, sums, stream));
  if (p->rows == 1) return absl::OkStatus();
  return reduce_scan::LaunchSumFinalize<float>(plan, sums, args.output, stream);
}

absl::Status RowPartitionScan::can_implement(const RowPartitionArgs& args) {
  HISTD_RETURN_IF_ERROR(CheckArgs("row-partition scan", args));
  const auto in = reinterpret_cast<uintptr_t>(args.input), out = reinterpret_cast<uintptr_t>(args.output);
  if (args.n > 0 && in < out + 4 * args.n && out < in + 4 * args.n) {
    return absl::InvalidArgumentError("row-partition scan: output overlaps the input");
  }
  return absl::OkStatus();
}

size_t RowPartitionScan::get_workspace_size(const RowPartitionArgs& args) {
  if (!can_implement(args).ok()) return 0;
  const Partition p = MakePartition(args.n, CurrentDeviceSmCountOr());
  return 2 * p.rows * sizeof(double);
}

absl::Status RowPartitionScan::run(const RowPartitionArgs& args, void* workspace, cudaStream_t stream) {
  HISTD_RETURN_IF_ERROR(can_implement(args));
  if (args.n == 0) return absl::OkStatus();
  absl::StatusOr<int> sms = CurrentDeviceSmCount();
  if (!sms.ok()) return sms.status();
  const Partition partition = MakePartition(args.n, *sms);
  const Partition* p = &partition;
  HISTD_RETURN_IF_ERROR(reduce_scan::CheckWorkspace("row-partition scan", workspace, 2 * p->rows * sizeof(double)));
  auto* sums = static_cast<double*>(workspace);
  double* starts = nullptr;
  if (p->rows > 1) {
    starts = sums + p->rows;
    HISTD_RETURN_IF_ERROR(
        reduce_scan::LaunchSumSegments<float>(SegmentPlan(*p, args.n), args.input, nullptr, sums, stream));
    SumsToStartsKernel<<<1, 1024, 0, stream>>>(sums, static_cast<uint32_t>(p->rows), starts);
    HISTD_RETURN_IF_ERROR(CheckLaunch("GPU_SumsToStarts", stream));
  }
  RowScanKernel<<<static_cast<unsigned>(p->rows), Tuning::kThreads, 0, stream>>>(
      args.input, args.output, args.n, p->tiles_per_row, p->tiles, starts, args.inclusive);
  return CheckLaunch("GPU_Scan (RowScanKernel)", stream);
}

}  // namespace histd::cuda
