// AllocateHostArray and the blocked transpose (used by Transpose and by transposed reads).
#include <algorithm>
#include <cstring>
#include <new>

#include "absl/strings/str_format.h"
#include "kernels/cpu/cpu_compute.h"

namespace histd {
namespace {

// Elements per transpose task.
constexpr uint64_t kElementsPerTask = 1 << 16;

template <typename T>
void TransposeTyped(const T* src, uint64_t rows, uint64_t cols, uint64_t pitch, T* dst,
                    ThreadPool& pool) {
  if (rows == 0 || cols == 0) return;
  if (rows == 1) {  // 1 x N -> N x 1: the same bytes
    std::memcpy(dst, src, cols * sizeof(T));
    return;
  }
  // Square tiles: a tile's source rows and destination rows both stay in L1.
  constexpr uint64_t kTile = sizeof(T) == 1 ? 64 : 32;
  const uint64_t tile_rows = rows / kTile + (rows % kTile != 0);
  const uint64_t grain = std::max<uint64_t>(1, kElementsPerTask / (kTile * cols));
  pool.ParallelFor(tile_rows, grain, [&](uint64_t t0, uint64_t t1) {
    for (uint64_t t = t0; t < t1; ++t) {
      const uint64_t r0 = t * kTile, r1 = std::min(rows, r0 + kTile);
      for (uint64_t c0 = 0; c0 < cols; c0 += kTile) {
        const uint64_t c1 = std::min(cols, c0 + kTile);
        for (uint64_t r = r0; r < r1; ++r) {
          const T* in = src + r * pitch;
          for (uint64_t c = c0; c < c1; ++c) dst[c * rows + r] = in[c];
        }
      }
    }
  });
}

}  // namespace

absl::StatusOr<HostArray> AllocateHostArray(DType dtype, uint64_t rows, uint64_t cols) {
  try {
    return HostArray::Make(dtype, rows, cols);
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "cpu engine: cannot allocate a %u x %u %s result", rows, cols, DTypeName(dtype)));
  } catch (const std::length_error&) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "cpu engine: a %u x %u %s result is too large", rows, cols, DTypeName(dtype)));
  }
}

void TransposeElements(const void* src, uint64_t rows, uint64_t cols, uint64_t src_pitch,
                       size_t elem_bytes, void* dst, ThreadPool& pool) {
  switch (elem_bytes) {
    case 1:
      TransposeTyped(static_cast<const uint8_t*>(src), rows, cols, src_pitch,
                     static_cast<uint8_t*>(dst), pool);
      break;
    case 4:
      TransposeTyped(static_cast<const uint32_t*>(src), rows, cols, src_pitch,
                     static_cast<uint32_t*>(dst), pool);
      break;
    default:
      TransposeTyped(static_cast<const uint64_t*>(src), rows, cols, src_pitch,
                     static_cast<uint64_t*>(dst), pool);
      break;
  }
}

absl::StatusOr<HostArray> CpuTranspose(const HostView& in, ThreadPool& pool) {
  absl::StatusOr<HostArray> out = AllocateHostArray(in.dtype, in.cols, in.rows);
  if (!out.ok()) return out.status();
  TransposeElements(in.data, in.rows, in.cols, in.cols, DTypeSize(in.dtype), out->bytes.data(),
                    pool);
  return out;
}

}  // namespace histd
