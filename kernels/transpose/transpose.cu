// Host side of the production transpose: validation, path choice, launch, launch check.
// Contract and usage: transpose.h. Kernels: kernel_transpose.cuh, block_transpose.cuh.
#include "kernels/common/device_limits.h"
#include "kernels/common/device_sms.h"
#include "kernels/transpose/transpose.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "kernels/common/cuda_status.h"
#include "kernels/common/resident_blocks.cuh"
#include "kernels/transpose/block_transpose_bytes_async.cuh"
#include "kernels/transpose/kernel_transpose.cuh"
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


// The measurements behind these rules: bench/results/transpose.md, H100 run of 2026-11-23
// (ratios to cublasSgeam / % of device copy measured in the same process).
TransposePath ChoosePath(const TransposeArgs& r) {
  if (IsVector(r)) return TransposePath::kStridedCopy;
  if (r.elem_bytes == 1) {
    // 16-byte aligned: 256 x 256 tiles through a 2-stage asynchronous-copy ring once every
    // SM gets a tile: 86.1% of copy on 64 x 256 x 8192 histograms, 86.9% at 16384^2, 86.8%
    // at 8192 x 32768, 78.0% at 8192^2 (the register tile, bytes16x4 128x128 streaming:
    // 80.5-82.5%, 75.6%; 3 stages within 1% of 2). Fewer tiles than SMs (one 256 x 8192
    // histogram: 32 of them) keep the 128 x 128 register tile, which spreads the same bytes
    // over 4x the blocks.
    if (AlignedTo(r, 16)) {
      constexpr int64_t kBig = tt::BytesAsync256x256S2::kTileRows;
      static_assert(tt::BytesAsync256x256S2::kTileCols == kBig, "square tile");
      const int64_t big_tiles = ((r.rows + kBig - 1) / kBig) * ((r.cols + kBig - 1) / kBig) * r.batch;
      return big_tiles >= CurrentDeviceSmCountOr() ? TransposePath::kBytesAsync256x256S2 : TransposePath::kBytes16x4Streaming;
    }
    if (AlignedTo(r, 4)) {
      switch (tt::kBytesTile) {
        case tt::BytesTile::kLine128x128: return TransposePath::kBytes4x4Wide;
        case tt::BytesTile::kLine256x128: return TransposePath::kBytes4x4Tall;
        default: return TransposePath::kBytes4x4;
      }
    }
    // Unaligned rows (16383 x 16385): 41.6% of copy against 31.9% for the plain 64 x 64 tile.
    return TransposePath::kScalarTile64Occ4Grouped;
  }
  if (r.elem_bytes == 4) {
    // One 64 x 64 tile per block at 4 blocks/SM: 0.996-1.033x Sgeam on every aligned square
    // and 8192 x 32768 (the pipelined tile: 0.963-0.997x).
    if (AlignedTo(r, 16)) return TransposePath::kScalarTile64Occ4;
    // Odd shapes: grouped tile order, 0.987x Sgeam on 16383 x 16385 (row bands: 0.923x).
    return TransposePath::kScalarTile64Grouped;
  }
  return TransposePath::kScalarTile64;  // 8-byte: 1.029x cublasDgeam at 8192^2
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

// Pipelined: a persistent grid, as many blocks as fit on the GPU at once (fewer for small
// problems). Otherwise one block per tile (a grid-stride loop past 2^31 - 1 tiles).
template <class Tile, bool kPipelined>
absl::Status LaunchTiles(const TransposeArgs& r, const char* name, cudaStream_t stream,
                         int64_t group_tile_rows = 0) {
  const int64_t tiles = ((r.rows + Tile::kTileRows - 1) / Tile::kTileRows) *
                        ((r.cols + Tile::kTileCols - 1) / Tile::kTileCols) * r.batch;
  constexpr auto kernel = kPipelined ? transpose_detail::TileTransposeKernel<Tile> : transpose_detail::OneTileKernel<Tile>;
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
absl::Status LaunchScalar(const TransposeArgs& r, TransposePath path, cudaStream_t stream) {
  using transpose_detail::ScalarTile;
  switch (path) {
    case TransposePath::kScalarTile64Pipelined:
      return LaunchTiles<ScalarTile<T, tt::ScalarTile64>, true>(r, "transpose_scalar_tile64_pipelined", stream);
    case TransposePath::kScalarTile64DeepPipelined:
      return LaunchTiles<ScalarTile<T, tt::ScalarTile64Deep>, true>(r, "transpose_scalar_tile64_deep", stream);
    case TransposePath::kScalarTile64:
      return LaunchTiles<ScalarTile<T, tt::ScalarTile64>, false>(r, "transpose_scalar_tile64", stream);
    case TransposePath::kScalarTile64Grouped:
      return LaunchTiles<ScalarTile<T, tt::ScalarTile64>, false>(r, "transpose_scalar_tile64_grouped", stream,
                                                                  tt::kGroupRowsBytes);
    case TransposePath::kScalarTile64PipelinedGrouped8:
      return LaunchTiles<ScalarTile<T, tt::ScalarTile64>, true>(r, "transpose_scalar_tile64_pipelined_g8", stream,
                                                                 tt::kGroupRowsSmall);
    case TransposePath::kScalarTile64PipelinedGrouped32:
      return LaunchTiles<ScalarTile<T, tt::ScalarTile64>, true>(r, "transpose_scalar_tile64_pipelined_g32", stream,
                                                                 tt::kGroupRowsLarge);
    case TransposePath::kScalarTile32Pipelined:
      return LaunchTiles<ScalarTile<T, tt::ScalarTile32>, true>(r, "transpose_scalar_tile32_pipelined", stream);
    case TransposePath::kScalarTile64Occ4:
      return LaunchTiles<ScalarTile<T, tt::ScalarTile64Occ4>, false>(r, "transpose_scalar_tile64_occ4", stream);
    case TransposePath::kScalarTile64Occ4Grouped:
      return LaunchTiles<ScalarTile<T, tt::ScalarTile64Occ4>, false>(r, "transpose_scalar_tile64_occ4_g16", stream,
                                                                      tt::kGroupRowsBytes);
    case TransposePath::kScalarTile64PipelinedStreaming:
      return LaunchTiles<ScalarTile<T, tt::ScalarTile64Streaming>, true>(r, "transpose_scalar_tile64_pipelined_cs",
                                                                          stream);
    default:
      return LaunchTiles<ScalarTile<T, tt::ScalarTile32>, false>(r, "transpose_scalar_tile32", stream);
  }
}

absl::Status LaunchScalarAnyType(const TransposeArgs& r, TransposePath path, cudaStream_t stream) {
  switch (r.elem_bytes) {
    case 1: return LaunchScalar<uint8_t>(r, path, stream);
    case 2: return LaunchScalar<uint16_t>(r, path, stream);
    case 4: return LaunchScalar<uint32_t>(r, path, stream);
    default: return LaunchScalar<unsigned long long>(r, path, stream);
  }
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

absl::Status Transpose::can_implement(const TransposeArgs& args) {
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

size_t Transpose::get_workspace_size(const TransposeArgs&) { return 0; }

absl::Status Transpose::initialize(const TransposeArgs& args, void*, TransposePath path) {
  initialized_ = false;
  HISTD_RETURN_IF_ERROR(can_implement(args));
  args_ = Resolve(args);
  if (!Empty(args_)) {
    const std::string problem = PathProblem(path, args_);
    if (!problem.empty()) return absl::InvalidArgumentError(absl::StrCat("transpose: ", problem));
    path_ = path == TransposePath::kAuto ? ChoosePath(args_) : path;
  }
  initialized_ = true;
  return absl::OkStatus();
}

absl::Status Transpose::run(cudaStream_t stream) {
  if (!initialized_) return absl::FailedPreconditionError("transpose: run() before initialize()");
  const TransposeArgs& r = args_;
  if (Empty(r)) return absl::OkStatus();
  using transpose_detail::Bytes16x4Tile;
  using transpose_detail::RegisterBlockTile;
  switch (path_) {
    case TransposePath::kStridedCopy:
      return LaunchVectorShape(r, stream);
    case TransposePath::kBytes4x4:
      return LaunchTiles<RegisterBlockTile<1, tt::Bytes4x4>, true>(r, "transpose_bytes4x4", stream);
    case TransposePath::kBytes4x4Wide:
      return LaunchTiles<RegisterBlockTile<1, tt::Bytes4x4Line>, true>(r, "transpose_bytes4x4_line", stream);
    case TransposePath::kBytes4x4Tall:
      return LaunchTiles<RegisterBlockTile<1, tt::Bytes4x4LineTall>, true>(r, "transpose_bytes4x4_line_tall", stream);
    case TransposePath::kBytes4x4TallGrouped:
      return LaunchTiles<RegisterBlockTile<1, tt::Bytes4x4LineTall>, true>(r, "transpose_bytes4x4_line_tall_g16",
                                                                           stream, tt::kGroupRowsBytes);
    case TransposePath::kBytes16x4:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4>, true>(r, "transpose_bytes16x4", stream);
    case TransposePath::kBytes16x4Deep:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4Deep>, true>(r, "transpose_bytes16x4_deep", stream);
    case TransposePath::kBytes16x4Tall:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4Tall>, true>(r, "transpose_bytes16x4_tall", stream);
    case TransposePath::kBytes16x4Wide:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4Wide>, true>(r, "transpose_bytes16x4_wide", stream);
    case TransposePath::kBytes16x4Grouped:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4>, true>(r, "transpose_bytes16x4_g16", stream,
                                                             tt::kGroupRowsBytes);
    case TransposePath::kBytes16x4Streaming:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4Streaming>, true>(r, "transpose_bytes16x4_cs", stream);
    case TransposePath::kBytes16x4OneTile:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4Occ8>, false>(r, "transpose_bytes16x4_one_tile", stream);
    case TransposePath::kBytes16x4OneTileGrouped:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4Occ8>, false>(r, "transpose_bytes16x4_one_tile_g16", stream,
                                                                  tt::kGroupRowsBytes);
    case TransposePath::kBytes16x4TallOneTile:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4TallOcc4>, false>(r, "transpose_bytes16x4_tall_one_tile", stream);
    case TransposePath::kBytes16x4TallStreaming:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4TallStreaming>, true>(r, "transpose_bytes16x4_tall_cs", stream);
    case TransposePath::kBytes16x4TallStreamingGrouped:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4TallStreaming>, true>(r, "transpose_bytes16x4_tall_cs_g8", stream,
                                                                          tt::kGroupRowsSmall);
    case TransposePath::kBytes16x4StreamingGrouped:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4Streaming>, true>(r, "transpose_bytes16x4_cs_g16", stream,
                                                                      tt::kGroupRowsBytes);
    case TransposePath::kBytes16x4TallDeepStreaming:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4TallDeepStreaming>, true>(r, "transpose_bytes16x4_tall256_cs", stream);
    case TransposePath::kBytes16x4TallDeepStreaming6:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4TallDeepStreaming6>, true>(r, "transpose_bytes16x4_tall256_cs_6", stream);
    case TransposePath::kBytesAsync256x128:
      return LaunchAsyncBytes<tt::BytesAsync256x128>(r, "transpose_bytes_async_256x128", stream);
    case TransposePath::kBytesAsync128x128:
      return LaunchAsyncBytes<tt::BytesAsync128x128>(r, "transpose_bytes_async_128x128", stream);
    case TransposePath::kBytesAsync128x128Deep:
      return LaunchAsyncBytes<tt::BytesAsync128x128Deep>(r, "transpose_bytes_async_128x128_6", stream);
    case TransposePath::kBytesAsync256x256:
      return LaunchAsyncBytes<tt::BytesAsync256x256>(r, "transpose_bytes_async_256x256", stream);
    case TransposePath::kBytesAsync256x256S2:
      return LaunchAsyncBytes<tt::BytesAsync256x256S2>(r, "transpose_bytes_async_256x256_s2", stream);
    case TransposePath::kBytesAsync512x128:
      return LaunchAsyncBytes<tt::BytesAsync512x128>(r, "transpose_bytes_async_512x128", stream);
    case TransposePath::kBytesAsync128x512:
      return LaunchAsyncBytes<tt::BytesAsync128x512>(r, "transpose_bytes_async_128x512", stream);
    case TransposePath::kBytesAsync256x128Grouped:
      return LaunchAsyncBytes<tt::BytesAsync256x128>(r, "transpose_bytes_async_256x128_g8", stream,
                                                     tt::kGroupRowsSmall);
    case TransposePath::kBytes16x4Square:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4Square>, true>(r, "transpose_bytes16x4_square_cs", stream);
    case TransposePath::kBytes16x4SquareGrouped:
      return LaunchTiles<Bytes16x4Tile<tt::Bytes16x4Square>, true>(r, "transpose_bytes16x4_square_cs_g8", stream,
                                                                   tt::kGroupRowsSmall);
    case TransposePath::kVec4x4:
      return LaunchTiles<RegisterBlockTile<4, tt::Vec4x4>, true>(r, "transpose_vec4x4", stream);
    case TransposePath::kVec4x4Deep:
      return LaunchTiles<RegisterBlockTile<4, tt::Vec4x4Deep>, true>(r, "transpose_vec4x4_deep", stream);
    case TransposePath::kVec2x2:
      return LaunchTiles<RegisterBlockTile<8, tt::Vec2x2>, true>(r, "transpose_vec2x2", stream);
    case TransposePath::kScalarTile64:
    case TransposePath::kScalarTile64Pipelined:
    case TransposePath::kScalarTile64DeepPipelined:
    case TransposePath::kScalarTile32:
    case TransposePath::kScalarTile32Pipelined:
    case TransposePath::kScalarTile64Grouped:
    case TransposePath::kScalarTile64PipelinedGrouped8:
    case TransposePath::kScalarTile64PipelinedGrouped32:
    case TransposePath::kScalarTile64PipelinedStreaming:
    case TransposePath::kScalarTile64Occ4:
    case TransposePath::kScalarTile64Occ4Grouped:
      return LaunchScalarAnyType(r, path_, stream);
    case TransposePath::kAuto:
      break;
  }
  return absl::InternalError("transpose: unknown path");
}

absl::Status RunTranspose(const TransposeArgs& args, cudaStream_t stream, TransposePath path) {
  Transpose op;
  HISTD_RETURN_IF_ERROR(op.initialize(args, nullptr, path));
  return op.run(stream);
}

}  // namespace histd::cuda
