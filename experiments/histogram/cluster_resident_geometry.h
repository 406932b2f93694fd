// Where each bin of a histogram lives in the cluster-resident variant (host and device).
//
// Bins are addressed in "aligned space": u = misalign + bin, with misalign = the bins
// pointer's offset within its 16-byte chunk, so that u / 16 names a 16-byte chunk of
// global memory. Aligned space is cut into passes of `span` = cluster * slice positions;
// inside a pass, position d belongs to granule d / 256, which lives in block
// (granule % cluster) of the cluster at lane ((granule / cluster) * 256 + d % 256).
// Interleaving granules spreads a hot region of the histogram over every block of the
// cluster; a 256-lane granule is 256 contiguous global bytes, so a block's write-out stays
// coalesced (16 threads x 16-byte chunks per granule). slice is a multiple of 256 and at
// most the block's lane capacity.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define HISTD_RG_HD __host__ __device__
#else
#define HISTD_RG_HD
#endif

namespace histd::cuda::histogram {

inline constexpr uint32_t kResidentGranule = 256;  // lanes; a power of two

struct ResidentGeometry {
  uint32_t misalign;  // bins pointer & 15
  uint32_t passes;    // >= 1
  uint32_t slice;     // lanes per block per pass, multiple of kResidentGranule
  uint64_t span;      // cluster * slice: aligned positions per pass

  // capacity: lanes a block holds, a multiple of kResidentGranule.
  HISTD_RG_HD static ResidentGeometry For(uint64_t bins_address, uint64_t bins, uint32_t cluster,
                                          uint32_t capacity) {
    ResidentGeometry g;
    g.misalign = static_cast<uint32_t>(bins_address & 15u);
    const uint64_t total = bins + g.misalign;
    const uint64_t per_pass = uint64_t{cluster} * capacity;
    g.passes = static_cast<uint32_t>((total + per_pass - 1) / per_pass);
    const uint64_t per_block = (total + uint64_t{g.passes} * cluster - 1) / (uint64_t{g.passes} * cluster);
    g.slice = static_cast<uint32_t>((per_block + kResidentGranule - 1) / kResidentGranule * kResidentGranule);
    g.span = uint64_t{cluster} * g.slice;
    return g;
  }
};

}  // namespace histd::cuda::histogram
