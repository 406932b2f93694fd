// Projection dispatch: the launches of the single-kernel row and column sums, templated on
// the shape (projection.h's contract; the shapes in tuning.h and the experiments). The
// production op (projection.cu) instantiates the shapes tuning.h picks; the experiments
// (experiments/reduce_scan/projection_variants.cu) the others.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "absl/status/status.h"
#include "kernels/common/cuda_status.h"
#include "kernels/common/dependent_launch.cuh"
#include "kernels/reduce_scan/dispatch/kernel_projection.cuh"
#include "kernels/reduce_scan/dispatch/kernel_reduce.cuh"
#include "kernels/reduce_scan/projection.h"
#include "kernels/reduce_scan/tuning.h"

namespace histd::cuda::reduce_scan {

// The projection's output elements: cols for column sums (collapse kRows), rows for row sums.
inline uint64_t ProjectionOutputs(const ProjectionArgs& a) { return a.collapse == Dim::kRows ? a.cols : a.rows; }

inline absl::Status LaunchProjectionKernel(const char* name, const void* kernel, dim3 grid, dim3 block,
                                           unsigned cluster_y, bool pdl, cudaStream_t stream, void** params) {
  ExtendedLaunchConfig launch(grid, block, 0, stream, pdl, cluster_y > 1 ? dim3(1, cluster_y, 1) : dim3(0, 0, 0));
  HISTD_CUDA_RETURN_IF_ERROR(cudaLaunchKernelExC(&launch.config, kernel, params));
  return CheckLaunch(name, stream);
}

// Row sums of an array with no columns are zeros (no kernel reads anything).
inline absl::Status ZeroRowSums(const ProjectionArgs& a, cudaStream_t stream) {
  HISTD_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(a.output, 0, a.rows * sizeof(uint64_t), stream));
  return absl::OkStatus();
}


template <int kThreads, int kVectors>
absl::Status RunRows(const ProjectionArgs& a, cudaStream_t stream) {
  const uint8_t* in = a.input;
  uint64_t rows = a.rows, cols = a.cols;
  uint64_t* out = a.output;
  void* params[] = {&in, &rows, &cols, &out};
  const unsigned grid = static_cast<unsigned>(std::min<uint64_t>(rows, uint64_t{1} << 20));
  return LaunchProjectionKernel("RowSumsKernel", reinterpret_cast<const void*>(RowSumsKernel<kThreads, kVectors>),
                dim3(grid), dim3(kThreads), 1, a.dependent_launch, stream, params);
}

template <int kThreads, int kCluster>
absl::Status RunCols(const ProjectionArgs& a, cudaStream_t stream) {
  constexpr int kUnroll = 16;
  const void* kernel = reinterpret_cast<const void*>(ColumnSumsClusterKernel<kThreads, kCluster, kUnroll>);
  if (kCluster > 8) {
    HISTD_CUDA_RETURN_IF_ERROR(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  }
  const uint8_t* in = a.input;
  uint64_t rows = a.rows, cols = a.cols;
  uint64_t rows_per = (rows + kCluster - 1) / kCluster;
  uint64_t* out = a.output;
  void* params[] = {&in, &rows, &cols, &rows_per, &out};
  const uint64_t strip = uint64_t(kThreads) * kProjectionColsPerThread;
  const unsigned gx = static_cast<unsigned>((cols + strip - 1) / strip);
  return LaunchProjectionKernel("ColumnSumsClusterKernel", kernel, dim3(gx, kCluster), dim3(kThreads), kCluster,
                a.dependent_launch, stream, params);
}

// One row split of ColumnReduceKernel: a block per strip of Tuning::kStripVectors 16-byte
// columns, every row (rows < 2^24 keeps the u32 lane sums exact). kDependent: launched with
// PDL (ProjectionArgs::dependent_launch).
template <int kStrip, int kRowThreads, int kUnroll, bool kDependent>
absl::Status RunColsStrip(const ProjectionArgs& a, cudaStream_t stream) {
  using Tuning = ColumnReduceTuningT<kStrip, kRowThreads, kUnroll>;
  constexpr uint64_t kStripCols = uint64_t{kStrip} * kProjectionColsPerThread;
  const dim3 grid(static_cast<unsigned>((a.cols + kStripCols - 1) / kStripCols), 1);
  if constexpr (kDependent) {
    return LaunchDependent("ColumnReduceKernel(strip)", ColumnReduceKernel<uint8_t, SumOp, Tuning, true, uint64_t, true>,
                           grid, dim3(Tuning::kThreads), 0, stream, a.input, a.rows, a.cols, a.rows, a.output);
  } else {
    ColumnReduceKernel<uint8_t, SumOp, Tuning, true, uint64_t, false>
        <<<grid, Tuning::kThreads, 0, stream>>>(a.input, a.rows, a.cols, a.rows, a.output);
    return CheckLaunch("ColumnReduceKernel(strip)", stream);
  }
}

template <int kChunks, int kRowLanes, int kUnroll>
absl::Status RunColsPacked(const ProjectionArgs& a, cudaStream_t stream) {
  constexpr uint64_t kCols = uint64_t{kChunks} * kProjectionColsPerThread;
  const uint8_t* in = a.input;
  uint64_t rows = a.rows, cols = a.cols;
  uint64_t* out = a.output;
  void* params[] = {&in, &rows, &cols, &out};
  return LaunchProjectionKernel("ColumnSumsPackedKernel", reinterpret_cast<const void*>(ColumnSumsPackedKernel<kChunks, kRowLanes, kUnroll>),
                dim3(static_cast<unsigned>((cols + kCols - 1) / kCols)), dim3(kChunks * kRowLanes), 1,
                a.dependent_launch, stream, params);
}

}  // namespace histd::cuda::reduce_scan
