// Scan dispatch: the plan (single-pass look-back, warp per row, or column scan in one or
// three passes), its workspace, and the typed launchers of the kernels in kernel_scan.cuh.
// The plan is a pure function of the arguments, the SM count and the tuning. The production
// instances are built by scan.cu; an experiment with another tuning instantiates only its
// look-back kernel (LaunchLookbackScan) and runs every other plan through DeviceScan.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "absl/status/status.h"
#include "kernels/common/cuda_status.h"
#include "kernels/common/dependent_launch.cuh"
#include "kernels/reduce_scan/agent/chained_prefix.cuh"
#include "kernels/reduce_scan/agent/tile_prefix.cuh"
#include "kernels/reduce_scan/device_types.cuh"
#include "kernels/reduce_scan/dispatch/dispatch_reduce.cuh"
#include "kernels/reduce_scan/dispatch/kernel_scan.cuh"
#include "kernels/reduce_scan/dispatch/launch_typed.cuh"
#include "kernels/reduce_scan/scan.h"
#include "kernels/reduce_scan/tuning.h"

namespace histd::cuda::reduce_scan {

struct ScanPlan {
  enum class Kind : uint8_t { kNothing, kLookback, kWarpRows, kColumns };
  Kind kind = Kind::kNothing;
  // kLookback / kWarpRows: `segments` runs of seg_len elements, seg_stride apart.
  uint64_t segments = 0, seg_len = 0, seg_stride = 0;
  PrefixLayout layout;
  // kColumns: rows cut into `chunks` of chunk_rows (one chunk: a single pass).
  uint64_t chunks = 1, chunk_rows = 0;
  bool col_vector = false, col_wide = false;
  uint64_t col_grid_x = 0;  // chunk sums (ColumnReduceKernel) grid
  size_t workspace_bytes = 0;
  static constexpr size_t kTicketBytes = 16;
};

// T: input, A: work type (what is added), Tuning: ScanTuningT. allow_warp_rows = false keeps
// short rows on the tile kernel (a block per row when a row fits one tile; a measured variant).
template <typename T, typename A, typename Tuning>
ScanPlan MakeScanPlan(const ScanArgs& a, int sms, bool allow_warp_rows = true) {
  ScanPlan p;
  const uint64_t n = a.rows * a.cols;
  if (n == 0) return p;
  constexpr uint64_t V = Vec16<T>::kElems;
  constexpr uint64_t kTile = uint64_t(Tuning::kThreads) * Tuning::kItems;
  const bool contiguous = a.along == Dim::kAll || (a.along == Dim::kCols && a.rows == 1) ||
                          (a.along == Dim::kRows && a.cols == 1);
  if (contiguous || a.along == Dim::kCols) {
    p.segments = contiguous ? 1 : a.rows;
    p.seg_len = contiguous ? n : a.cols;
    p.seg_stride = contiguous ? 0 : a.cols;
    // Tiles covering the 16-byte view of a segment: its exact shift where every segment
    // has the same one (one segment, or a row pitch of whole 16-byte vectors), else the
    // worst case. (The worst case gave 256 x 8192 u8 rows a fifth, empty tile.)
    const bool same_shift = contiguous || (p.seg_stride * sizeof(T)) % 16 == 0;
    const uint64_t shift = same_shift ? uint64_t(ShiftOf(static_cast<const T*>(a.input))) : V - 1;
    const uint64_t tiles = CeilDiv(p.seg_len + shift, kTile);
    if (!contiguous && allow_warp_rows && p.seg_len + shift <= kScanWarpPerRowMaxElems<T>) {
      p.kind = ScanPlan::Kind::kWarpRows;
      return p;
    }
    p.kind = ScanPlan::Kind::kLookback;
    p.layout = Tuning::kChained ? MakeChainedLayout(p.segments, tiles) : MakePrefixLayout(p.segments, tiles);
    p.workspace_bytes = ScanPlan::kTicketBytes + p.layout.entries * PrefixStore<A>::BytesPerEntry();
    return p;
  }
  // Down each column of a rows x cols array (cols > 1).
  p.kind = ScanPlan::Kind::kColumns;
  p.chunk_rows = a.rows;
  const uint64_t want_threads = uint64_t(sms) * kColumnScanThreadsPerSm;
  if (a.cols < want_threads && a.rows >= 2 * kColumnScanMinChunkRows) {
    const uint64_t chunks = std::min<uint64_t>(
        {CeilDiv(want_threads, a.cols), a.rows / kColumnScanMinChunkRows, 65535});
    p.chunk_rows = CeilDiv(a.rows, chunks);
  }
  p.chunks = CeilDiv(a.rows, p.chunk_rows);
  if (p.chunks > 1) {
    // chunk sums, then carries, in the column reduce's work type (see LaunchScan)
    p.workspace_bytes = 2 * p.chunks * a.cols * sizeof(typename Types<T, SumOp>::Work);
    p.col_vector = (a.cols * sizeof(T)) % 16 == 0;
    p.col_wide = p.chunk_rows < 64;
    const uint64_t vc = p.col_vector ? V : 1;
    const uint64_t shift = p.col_vector ? (reinterpret_cast<uintptr_t>(a.input) & 15u) / sizeof(T) : 0;
    const uint64_t strip = p.col_wide ? ColumnReduceWideTuning::kStripVectors : ColumnReduceTallTuning::kStripVectors;
    p.col_grid_x = CeilDiv(CeilDiv(a.cols + shift, vc), strip);
  }
  return p;
}

// A kLookback plan: the workspace cleared (LaunchClearScanWorkspace), then the single-pass
// scan, both with programmatic dependent launch.
template <typename T, typename A, typename S, typename Tuning>
absl::Status LaunchLookbackScan(const ScanPlan& p, const T* in, S* out, bool inclusive, void* workspace,
                                cudaStream_t stream) {
  auto* ticket = static_cast<unsigned long long*>(workspace);
  auto* words = ticket + ScanPlan::kTicketBytes / sizeof(unsigned long long);
  HISTD_RETURN_IF_ERROR(LaunchClearScanWorkspace(workspace, p.workspace_bytes, stream));
  const uint64_t blocks = p.segments * p.layout.tiles;
  return LaunchDependent("LookbackScanKernel", LookbackScanKernel<T, A, S, Tuning>, dim3(static_cast<unsigned>(blocks)),
                         dim3(Tuning::kThreads), 0, stream, in, out, p.seg_len, p.seg_stride, p.layout, ticket, words,
                         inclusive);
}

// T -> S (result) through A (work).
template <typename T, typename A, typename S, typename Tuning>
absl::Status LaunchScan(const ScanPlan& p, const T* in, S* out, uint64_t rows, uint64_t cols,
                        bool inclusive, void* workspace, cudaStream_t stream) {
  switch (p.kind) {
    case ScanPlan::Kind::kNothing:
      return absl::OkStatus();
    case ScanPlan::Kind::kLookback:
      return LaunchLookbackScan<T, A, S, Tuning>(p, in, out, inclusive, workspace, stream);
    case ScanPlan::Kind::kWarpRows: {
      const uint64_t blocks = std::min<uint64_t>(CeilDiv(p.segments, 8), 1u << 30);
      WarpRowScanKernel<T, A, S><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(in, out, p.segments, p.seg_len, inclusive);
      return CheckLaunch("WarpRowScanKernel", stream);
    }
    case ScanPlan::Kind::kColumns: {
      // Column scans always add in the standard work type (the chunk sums come from the
      // column reduce, whose partials are in it), whatever A the look-back path uses.
      using W = typename Types<T, SumOp>::Work;
      const unsigned gx = static_cast<unsigned>(CeilDiv(cols, kColumnScanThreads));
      if (p.chunks == 1) {
        ColumnScanKernel<T, W, S><<<dim3(gx, 1), kColumnScanThreads, 0, stream>>>(in, out, rows, cols, rows, nullptr, inclusive);
        return CheckLaunch("ColumnScanKernel", stream);
      }
      W* sums = static_cast<W*>(workspace);
      W* carries = sums + p.chunks * cols;
      HISTD_RETURN_IF_ERROR(LaunchColumnSumPartials<T>(p.col_vector, p.col_wide,
                                                       dim3(static_cast<unsigned>(p.col_grid_x), static_cast<unsigned>(p.chunks)),
                                                       in, rows, cols, p.chunk_rows, sums, stream));
      // Carries: exclusive scan of the chunk sums down each column.
      ColumnScanKernel<W, W, W><<<dim3(gx, 1), kColumnScanThreads, 0, stream>>>(sums, carries, p.chunks, cols, p.chunks, nullptr, false);
      HISTD_RETURN_IF_ERROR(CheckLaunch("ColumnScanKernel(carries)", stream));
      ColumnScanKernel<T, W, S><<<dim3(gx, static_cast<unsigned>(p.chunks)), kColumnScanThreads, 0, stream>>>(
          in, out, rows, cols, p.chunk_rows, carries, inclusive);
      return CheckLaunch("ColumnScanKernel", stream);
    }
  }
  return absl::InternalError("unknown scan plan");
}

}  // namespace histd::cuda::reduce_scan
