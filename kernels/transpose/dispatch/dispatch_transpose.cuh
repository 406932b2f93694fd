// The transpose dispatch's shared pieces: argument resolution and checks, the layout each
// path needs, and the launchers of every kernel family (kernel_transpose.cuh,
// block_transpose_bytes_async.cuh), templated on their tunings (kernels/transpose/tuning.h).
// The production entry (transpose.cu) instantiates the paths ChoosePath returns; the
// experiments (experiments/transpose/transpose_paths.cu) every path. Internal linkage: each
// translation unit holds its own kernel instances.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "kernels/common/cuda_status.h"
#include "kernels/common/device_limits.h"
#include "kernels/common/device_sms.h"
#include "kernels/common/resident_blocks.cuh"
#include "kernels/transpose/block/block_transpose_bytes_async.cuh"
#include "kernels/transpose/dispatch/kernel_transpose.cuh"
#include "kernels/transpose/transpose.h"
#include "kernels/transpose/tuning.h"

namespace histd::cuda {
namespace {

namespace tt = transpose_tuning;
using transpose_detail::Problem;

constexpr int64_t kMaxDim = int64_t{1} << 40;  // keeps every product below below 2^63

// Fills in the defaults (pitches, batch strides) of args.
TransposeArgs Resolve(const TransposeArgs& a) {
  TransposeArgs r = a;
  if (r.in_pitch == 0) r.in_pitch = r.cols;
  if (r.out_pitch == 0) r.out_pitch = r.rows;
  if (r.in_batch_stride == 0) r.in_batch_stride = r.rows * r.in_pitch;
  if (r.out_batch_stride == 0) r.out_batch_stride = r.cols * r.out_pitch;
  return r;
}

bool Empty(const TransposeArgs& r) { return r.rows == 0 || r.cols == 0 || r.batch == 0; }

// Bytes spanned by a batch of `n_rows` rows of `row_len` elements (non-empty).
int64_t ExtentBytes(int64_t batch, int64_t batch_stride, int64_t n_rows, int64_t pitch,
                    int64_t row_len, int elem_bytes) {
  return ((batch - 1) * batch_stride + (n_rows - 1) * pitch + row_len) * elem_bytes;
}

// True when pointers, pitches and batch strides are all multiples of `bytes`.
bool AlignedTo(const TransposeArgs& r, int bytes) {
  const auto ok = [&](int64_t elems) { return (elems * r.elem_bytes) % bytes == 0; };
  return reinterpret_cast<uintptr_t>(r.in) % bytes == 0 &&
         reinterpret_cast<uintptr_t>(r.out) % bytes == 0 && ok(r.in_pitch) && ok(r.out_pitch) &&
         (r.batch <= 1 || (ok(r.in_batch_stride) && ok(r.out_batch_stride)));
}

bool IsVector(const TransposeArgs& r) { return r.rows == 1 || r.cols == 1; }

// Why `path` cannot take the (resolved, valid, non-empty) args; empty string when it can.
std::string PathProblem(TransposePath path, const TransposeArgs& r) {
  if (std::string(TransposePathName(path)) == "?") return "unknown path";
  if (path == TransposePath::kStridedCopy && !IsVector(r)) {
    return "strided copy needs rows == 1 or cols == 1";
  }
  const TransposeLayoutNeed* need = TransposePathLayoutNeed(path);
  if (need == nullptr || (r.elem_bytes == need->elem_bytes && AlignedTo(r, need->alignment))) {
    return "";
  }
  return absl::StrCat(need->family, " needs ", need->elem_bytes, "-byte elements, ",
                      need->alignment, "-byte aligned");
}


// Transpose::can_implement (transpose.h).
absl::Status CheckTransposeArgs(const TransposeArgs& args) {
  const TransposeArgs r = Resolve(args);
  const int eb = r.elem_bytes;
  if (eb != 1 && eb != 2 && eb != 4 && eb != 8)
    return absl::InvalidArgumentError(absl::StrCat("transpose: elem_bytes must be 1, 2, 4 or 8, got ", eb));
  if (r.rows < 0 || r.cols < 0 || r.batch < 0 || r.rows > kMaxDim || r.cols > kMaxDim || r.batch > kMaxDim)
    return absl::InvalidArgumentError(absl::StrCat("transpose: bad shape ", r.batch, " x ", r.rows, " x ", r.cols));
  if (r.in_pitch < r.cols || r.in_pitch > kMaxDim)
    return absl::InvalidArgumentError(absl::StrCat("transpose: in_pitch ", r.in_pitch, " < cols ", r.cols));
  if (r.out_pitch < r.rows || r.out_pitch > kMaxDim)
    return absl::InvalidArgumentError(absl::StrCat("transpose: out_pitch ", r.out_pitch, " < rows ", r.rows));
  if (r.in_batch_stride < 0 || r.out_batch_stride < 0 || r.in_batch_stride > kMaxDim * 64 ||
      r.out_batch_stride > kMaxDim * 64)
    return absl::InvalidArgumentError("transpose: bad batch stride");
  if (Empty(r)) return absl::OkStatus();
  if (r.in == nullptr || r.out == nullptr)
    return absl::InvalidArgumentError("transpose: null device pointer");
  if (reinterpret_cast<uintptr_t>(r.in) % eb != 0 || reinterpret_cast<uintptr_t>(r.out) % eb != 0)
    return absl::InvalidArgumentError(absl::StrCat("transpose: pointers must be aligned to elem_bytes ", eb));
  // Product bounds: the largest offset must stay below 2^62 bytes.
  const double span = (double(r.batch) * double(std::max(r.in_batch_stride, r.out_batch_stride)) +
                       double(r.rows + r.cols) * double(r.in_pitch + r.out_pitch)) * eb;
  if (span > 4.0e18) return absl::InvalidArgumentError("transpose: problem too large");
  const int64_t out_matrix = (r.cols - 1) * r.out_pitch + r.rows;
  if (r.batch > 1 && r.out_batch_stride < out_matrix)
    return absl::InvalidArgumentError(absl::StrCat("transpose: out_batch_stride ", r.out_batch_stride,
                                                   " lets output matrices overlap (need >= ", out_matrix, ")"));
  const auto in_lo = reinterpret_cast<uintptr_t>(r.in);
  const auto out_lo = reinterpret_cast<uintptr_t>(r.out);
  const uintptr_t in_hi = in_lo + ExtentBytes(r.batch, r.in_batch_stride, r.rows, r.in_pitch, r.cols, eb);
  const uintptr_t out_hi = out_lo + ExtentBytes(r.batch, r.out_batch_stride, r.cols, r.out_pitch, r.rows, eb);
  if (in_lo < out_hi && out_lo < in_hi)
    return absl::InvalidArgumentError("transpose: input and output overlap (in-place is not supported)");
  return absl::OkStatus();
}

// group_tile_rows: 0 for row-band order, G > 0 for groups of G tile rows (kernel_transpose.cuh).
Problem MakeProblem(const TransposeArgs& r, int64_t group_tile_rows) {
  return Problem{static_cast<const char*>(r.in), static_cast<char*>(r.out), r.rows, r.cols,
                 r.in_pitch, r.out_pitch, r.batch, r.in_batch_stride, r.out_batch_stride,
                 r.elem_bytes, group_tile_rows};
}

// The asynchronous-copy 1-byte transpose: a persistent grid of as many blocks as fit.
template <class Tuning>
absl::Status LaunchAsyncBytes(const TransposeArgs& r, const char* name, cudaStream_t stream,
                              int64_t group_tile_rows = 0) {
  using Tile = transpose_detail::AsyncBytesTile<Tuning>;
  constexpr auto kernel = transpose_detail::AsyncBytesTransposeKernel<Tile>;
  static_assert(Tile::kSmemBytes <= kMaxSharedBytesPerBlock, "ring exceeds an SM's shared memory");
  const absl::StatusOr<int> per_sm = ResidentBlocksPerSm<kernel>(Tile::kThreads, Tile::kSmemBytes);
  if (!per_sm.ok()) return per_sm.status();
  const int64_t tiles = ((r.rows + Tile::kTileRows - 1) / Tile::kTileRows) *
                        ((r.cols + Tile::kTileCols - 1) / Tile::kTileCols) * r.batch;
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(tiles, int64_t{CurrentDeviceSmCountOr()} * *per_sm));
  kernel<<<grid, Tile::kThreads, Tile::kSmemBytes, stream>>>(MakeProblem(r, group_tile_rows));
  return CheckLaunch(name, stream);
}

// The kernel of a tile launch; the other one is not instantiated (a kernel named in a
// conditional expression would be built into the binary even though it never runs).
template <class Tile, bool kPipelined>
constexpr auto TileKernel() {
  if constexpr (kPipelined) {
    return transpose_detail::TileTransposeKernel<Tile>;
  } else {
    return transpose_detail::OneTileKernel<Tile>;
  }
}

// Pipelined: a persistent grid, as many blocks as fit on the GPU at once (fewer for small
// problems). Otherwise one block per tile (a grid-stride loop past 2^31 - 1 tiles).
template <class Tile, bool kPipelined>
absl::Status LaunchTiles(const TransposeArgs& r, const char* name, cudaStream_t stream,
                         int64_t group_tile_rows = 0) {
  const int64_t tiles = ((r.rows + Tile::kTileRows - 1) / Tile::kTileRows) *
                        ((r.cols + Tile::kTileCols - 1) / Tile::kTileCols) * r.batch;
  constexpr auto kernel = TileKernel<Tile, kPipelined>();
  constexpr size_t kDynamicSmem = transpose_detail::TileDynamicSmemBytes<Tile>();
  int64_t limit = INT_MAX;
  if (kPipelined || kDynamicSmem > 0) {  // the occupancy, and the dynamic shared-memory limit
    const absl::StatusOr<int> per_sm = ResidentBlocksPerSm<kernel>(Tile::kThreads, kDynamicSmem);
    if (!per_sm.ok()) return per_sm.status();
    if (kPipelined) limit = int64_t{CurrentDeviceSmCountOr()} * *per_sm;
  }
  const unsigned grid = static_cast<unsigned>(std::min<int64_t>(tiles, limit));
  kernel<<<grid, Tile::kThreads, kDynamicSmem, stream>>>(MakeProblem(r, group_tile_rows));
  return CheckLaunch(name, stream);
}

template <typename T>
absl::Status LaunchStrided(const TransposeArgs& r, cudaStream_t stream) {
  const int64_t n = std::max(r.rows, r.cols);
  const int64_t in_stride = r.rows == 1 ? 1 : r.in_pitch;
  const int64_t out_stride = r.rows == 1 ? r.out_pitch : 1;
  const int64_t blocks = std::min<int64_t>((n * r.batch + 255) / 256, int64_t{CurrentDeviceSmCountOr()} * 32);
  transpose_detail::StridedCopyKernel<T><<<static_cast<unsigned>(blocks), 256, 0, stream>>>(
      static_cast<const T*>(r.in), static_cast<T*>(r.out), n, in_stride, out_stride, r.batch,
      r.in_batch_stride, r.out_batch_stride);
  return CheckLaunch("transpose_strided_copy", stream);
}

absl::Status LaunchVectorShape(const TransposeArgs& r, cudaStream_t stream) {
  const int64_t n = std::max(r.rows, r.cols);
  const bool contiguous = (r.rows == 1 ? r.out_pitch : r.in_pitch) == 1 || n == 1;
  const int eb = r.elem_bytes;
  const bool aligned16 = reinterpret_cast<uintptr_t>(r.in) % 16 == 0 &&
                         reinterpret_cast<uintptr_t>(r.out) % 16 == 0 &&
                         (r.batch <= 1 || ((r.in_batch_stride * eb) % 16 == 0 &&
                                           (r.out_batch_stride * eb) % 16 == 0));
  if (contiguous && aligned16) {
    constexpr int kV = tt::StridedCopy::kVectorsPerThread;
    const int64_t row_bytes = n * eb;
    const int64_t per_block = int64_t{tt::StridedCopy::kThreads} * kV * 16;
    const int64_t bx = std::max<int64_t>(1, std::min<int64_t>((row_bytes + per_block - 1) / per_block,
                                                              int64_t{CurrentDeviceSmCountOr()} * 16));
    const int64_t by = std::min<int64_t>(r.batch, 65535);
    transpose_detail::RowCopyKernel<kV>
        <<<dim3(static_cast<unsigned>(bx), static_cast<unsigned>(by)), tt::StridedCopy::kThreads, 0, stream>>>(
            static_cast<const char*>(r.in), static_cast<char*>(r.out), row_bytes, r.batch,
            r.in_batch_stride * eb, r.out_batch_stride * eb);
    return CheckLaunch("transpose_row_copy", stream);
  }
  switch (eb) {
    case 1: return LaunchStrided<uint8_t>(r, stream);
    case 2: return LaunchStrided<uint16_t>(r, stream);
    case 4: return LaunchStrided<uint32_t>(r, stream);
    default: return LaunchStrided<unsigned long long>(r, stream);
  }
}

}  // namespace
}  // namespace histd::cuda
