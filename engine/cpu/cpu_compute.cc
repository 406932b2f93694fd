// AllocateHostArray and the blocked transpose (used by Transpose and by transposed reads).
#include <algorithm>
#include <cstring>
#include <new>

#include "absl/strings/str_format.h"
#include "engine/cpu/cpu_compute.h"

namespace histd {
namespace {

template <typename T>
void TransposeTyped(const T* src, uint64_t rows, uint64_t cols, uint64_t pitch, T* dst,
                    ThreadPool& pool) {
  if (rows == 0 || cols == 0) return;
  if (rows == 1) {  // 1 x N -> N x 1: the same bytes
    std::memcpy(dst, src, cols * sizeof(T));
    return;
  }
  // Two levels of blocking. A task transposes one kBlock x kBlock block, so the pages it
  // touches (kBlock source rows, kBlock destination rows) stay within the TLB's reach.
  // Inside, square kTile tiles go through a buffer in L1: each source row segment is read
  // whole and each destination row segment written whole, so power-of-two strides cause no
  // cache-set thrashing.
  constexpr uint64_t kTile = sizeof(T) == 1 ? 64 : 32;
  constexpr uint64_t kBlock = 256;
  static_assert(kBlock % kTile == 0);
  const uint64_t block_rows = rows / kBlock + (rows % kBlock != 0);
  const uint64_t block_cols = cols / kBlock + (cols % kBlock != 0);
  pool.ParallelFor(block_rows * block_cols, 1, [&](uint64_t b0, uint64_t b1) {
    T tile[kTile * kTile];
    for (uint64_t b = b0; b < b1; ++b) {
      const uint64_t br = (b / block_cols) * kBlock, bc = (b % block_cols) * kBlock;
      for (uint64_t r0 = br; r0 < std::min(rows, br + kBlock); r0 += kTile) {
        const uint64_t r1 = std::min(rows, r0 + kTile);
        for (uint64_t c0 = bc; c0 < std::min(cols, bc + kBlock); c0 += kTile) {
          const uint64_t c1 = std::min(cols, c0 + kTile);
          for (uint64_t r = r0; r < r1; ++r) {
            std::memcpy(tile + (r - r0) * kTile, src + r * pitch + c0, (c1 - c0) * sizeof(T));
          }
          for (uint64_t c = c0; c < c1; ++c) {
            T* out = dst + c * rows;
            for (uint64_t r = r0; r < r1; ++r) out[r] = tile[(r - r0) * kTile + (c - c0)];
          }
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
