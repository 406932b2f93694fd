// The blocks of one dimension of a read (ReadSpec in engine/engine.h): which bins each
// output element pools. One definition for the CPU engine, the CUDA kernel (host and device)
// and the checks.
//
// A dimension of `extent` bins (the region's rows or columns, counted from its start) is cut
//   - by factor (cells == 0): ceil(extent / factor) blocks of `factor` bins, the last one
//     partial: block i is [i f, min(extent, (i + 1) f));
//   - into exactly `cells` blocks (1 <= cells <= extent): block i is
//     [floor(i extent / cells), floor((i + 1) extent / cells)), so every block holds
//     floor(extent / cells) or ceil(extent / cells) bins, none is empty, and together they
//     cover the extent once. When cells divides extent this is the factor extent / cells.
// i * extent < 2^64 for every i <= cells <= extent < 2^32, so no product overflows.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define HISTD_BLOCKS_HD __host__ __device__
#else
#define HISTD_BLOCKS_HD
#endif

namespace histd {

struct BlockAxis {
  uint32_t extent = 0;
  uint32_t factor = 1;  // >= 1; used when cells == 0
  uint32_t cells = 0;   // 0: by factor

  // Output elements along this dimension.
  HISTD_BLOCKS_HD uint64_t count() const {
    return cells != 0 ? cells : (uint64_t{extent} + factor - 1) / factor;
  }
  // First bin of block i (i < count()), relative to the region's start.
  HISTD_BLOCKS_HD uint64_t begin(uint64_t i) const {
    return cells != 0 ? i * extent / cells : i * factor;
  }
  // One past the last bin of block i.
  HISTD_BLOCKS_HD uint64_t end(uint64_t i) const {
    if (cells != 0) return (i + 1) * extent / cells;
    const uint64_t e = (i + 1) * factor;
    return e < extent ? e : extent;
  }
  // The most bins any block holds (0 for an empty extent).
  HISTD_BLOCKS_HD uint64_t largest_block() const {
    if (extent == 0) return 0;
    if (cells != 0) return (uint64_t{extent} + cells - 1) / cells;
    return factor < extent ? factor : extent;
  }
};

}  // namespace histd
