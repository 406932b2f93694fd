// One block's work in the cluster-resident variant: a thread-block cluster holds a whole
// histogram (or one pass of it, cluster_resident_geometry.h) in its blocks' shared memory,
// every sample is applied to the owning block's lane through distributed shared memory,
// and after a cluster barrier each block merges its own lanes into the global one-byte
// bins with a saturating add (so it accumulates into histograms that already hold counts).
//
// A unit of work is (histogram, pass). One cluster owns a unit alone: it folds EVERY work
// item of that histogram (the planner chains items with the same bins pointer), so the
// 16-byte chunks wholly inside the histogram are merged with a plain load + store; only
// the (at most two) chunks shared with a neighbouring histogram use load + CAS.
// Within a unit, block `rank` reads 1/cluster of each item's samples once (16-byte
// streaming loads) and, in pass 0 only, adds the item's outflow.
//
// Exactness, per lane kind (ResidentLane, kernels/histogram/tuning.h):
//  * k8Cas: a remote load, then CAS of the containing 32-bit word with the byte + 1 only
//    while the byte reads < cap; retried with the value CAS returned. A byte only ever
//    goes from b < cap to b + 1 <= cap by a successful CAS: it never exceeds cap, never
//    carries, and reaches min(cap, hits) exactly. Write-out adds the byte as is.
//  * k16Gated: a remote read of the lane; red.add of 1 only when it read < cap. Every hit
//    is added until some read sees >= cap (the lane then already counts >= cap hits), so
//    min(cap, lane) = min(cap, hits). Bound: an add performed after the lane reached cap
//    comes from a read performed before; a thread's reads of a lane come after (program
//    order, same location, hence coherence) its adds of the previous batch, so at most
//    `pending` adds per thread are late: lane <= cap + cluster * threads * pending < 65536
//    (static_assert), so a lane never carries into its neighbour. Write-out: min(cap, lane).
//  * k32Red: red.add of 1 for every hit; lane <= hits of the unit < 2^32 (the host refuses
//    launches of 2^32 samples or more). Write-out: min(cap, lane).
// The global merge is byte -> max(b, min(cap, b + inc)) (SaturatingAddBytes), exact for
// any start value (exact_bin_ops.cuh).
#pragma once

#include <cooperative_groups.h>

#include <cstdint>

#include "experiments/histogram/cluster_resident_geometry.h"
#include "experiments/histogram/tuning_candidates.h"
#include "kernels/histogram/exact_bin_ops.cuh"
#include "kernels/histogram/histogram_accumulate.h"
#include "kernels/histogram/tile_view.cuh"

namespace histd::cuda::histogram {

struct ResidentParams {
  const HistogramWork* work;
  int work_count;
  const uint32_t* samples;
  HistogramOutflow* outflow;
  const uint32_t* unit_start;  // work_count + 1: exclusive prefix of units (leaders only)
  const int* next_same;        // work_count: next item with the same bins pointer, or -1
  uint32_t capacity;           // lanes per block, a multiple of kResidentGranule
};

constexpr uint32_t ResidentLaneBytes(ResidentLane l) {
  return l == ResidentLane::k8Cas ? 1u : l == ResidentLane::k16Gated ? 2u : 4u;
}

// What every thread needs about the current unit, in registers.
struct ResidentView {
  uint64_t pass_lo;  // first aligned position of the pass
  uint64_t span;     // aligned positions of the pass
  uint32_t cap;
  uint32_t misalign;
  uint32_t* lanes;   // this block's lanes
};

// N remote lane updates, each issued back to back (their loads first, then their atomics).
// kDedup: lanes of a warp naming the same bin are combined first (__match_any_sync); the
// lowest such lane adds their number (8-bit: min(cap, byte + n) by CAS; 32-bit: red.add n).
// kGuessZero (k8Cas): no remote load first; the first CAS assumes the word is 0 and, when
// wrong, returns the word for the retry (one round trip instead of two on empty words).
template <ResidentLane L, int C, int N, bool kDedup, bool kGuessZero>
__device__ __forceinline__ void UpdateRemote(const ResidentView& v, const uint64_t (&u)[N],
                                             const bool (&valid)[N]) {
  static_assert(C == 8 || C == 16, "granules are dealt with a mask");
  static_assert(!kDedup || L != ResidentLane::k16Gated, "combined adds would break the 16-bit bound");
  static_assert(!kGuessZero || L == ResidentLane::k8Cas, "only the CAS lanes can guess");
  constexpr int kLog2C = C == 16 ? 4 : 3;
  uint32_t* w[N];
  uint32_t shift[N];
  uint32_t add[N];
  bool in[N];
#pragma unroll
  for (int j = 0; j < N; ++j) {
    const uint64_t d = u[j] - v.pass_lo;
    in[j] = valid[j] && d < v.span;
    add[j] = 1;
  }
  if constexpr (kDedup) {
    const unsigned active = __activemask();
    const uint32_t lane = threadIdx.x & 31u;
#pragma unroll
    for (int j = 0; j < N; ++j) {
      const unsigned long long key = in[j] ? u[j] : (0xFFFFFFFF00000000ull | lane);  // unique when out
      const unsigned peers = __match_any_sync(active, key);
      if (in[j]) {
        add[j] = __popc(peers);
        in[j] = static_cast<uint32_t>(__ffs(peers) - 1) == lane;
      }
    }
  }
#pragma unroll
  for (int j = 0; j < N; ++j) {
    const uint64_t d = u[j] - v.pass_lo;
    const uint32_t d32 = static_cast<uint32_t>(d);
    const uint32_t g = d32 >> 8;
    const uint32_t rank = g & (C - 1);
    const uint32_t local = ((g >> kLog2C) << 8) | (d32 & 255u);
    uint32_t word = local;
    shift[j] = 0;
    if constexpr (L == ResidentLane::k8Cas) {
      word = local >> 2;
      shift[j] = (local & 3u) * 8u;
    } else if constexpr (L == ResidentLane::k16Gated) {
      word = local >> 1;
      shift[j] = (local & 1u) * 16u;
    }
    w[j] = in[j] ? cooperative_groups::this_cluster().map_shared_rank(v.lanes, rank) + word : nullptr;
  }
  if constexpr (L == ResidentLane::k32Red) {
#pragma unroll
    for (int j = 0; j < N; ++j)
      if (in[j]) atomicAdd(w[j], add[j]);
  } else {
    constexpr uint32_t kMask = L == ResidentLane::k8Cas ? 0xFFu : 0xFFFFu;
    uint32_t seen[N];
#pragma unroll
    for (int j = 0; j < N; ++j)
      seen[j] = in[j] && !kGuessZero ? *reinterpret_cast<volatile uint32_t*>(w[j]) : 0u;
    if constexpr (L == ResidentLane::k16Gated) {
#pragma unroll
      for (int j = 0; j < N; ++j)
        if (in[j] && ((seen[j] >> shift[j]) & kMask) < v.cap) atomicAdd(w[j], 1u << shift[j]);
    } else {
      bool retry[N];
#pragma unroll
      for (int j = 0; j < N; ++j) {
        retry[j] = false;
        const uint32_t b = (seen[j] >> shift[j]) & kMask;
        if (!in[j] || b >= v.cap) continue;
        const uint32_t prev = atomicCAS(w[j], seen[j], seen[j] + (min(v.cap - b, add[j]) << shift[j]));
        retry[j] = prev != seen[j];
        seen[j] = prev;
      }
#pragma unroll
      for (int j = 0; j < N; ++j) {
        if (!retry[j]) continue;
        uint32_t cur = seen[j];
        for (uint32_t b = (cur >> shift[j]) & kMask; b < v.cap; b = (cur >> shift[j]) & kMask) {
          const uint32_t prev = atomicCAS(w[j], cur, cur + (min(v.cap - b, add[j]) << shift[j]));
          if (prev == cur) break;
          cur = prev;
        }
      }
    }
  }
}

// This block's share of an index item: scalar head to 16-byte alignment, a body of two
// 16-byte loads per thread per round (8 samples, applied kPending at a time), scalar tail.
template <ResidentLane L, int C, int kThreads, int kPending, bool kDedup, bool kGuessZero>
__device__ void FoldIndexShare(const ResidentView& v, const uint32_t* src, uint64_t n) {
  static_assert(8 % kPending == 0, "a round of 8 samples splits into whole batches");
  const uint32_t tid = threadIdx.x;
  uint64_t head = ((16u - (reinterpret_cast<uintptr_t>(src) & 15u)) & 15u) / 4u;
  if (head > n) head = n;
  if (tid < head) {
    const uint64_t u[1] = {v.misalign + uint64_t{src[tid]}};
    const bool ok[1] = {true};
    UpdateRemote<L, C, 1, kDedup, kGuessZero>(v, u, ok);
  }
  const uint4* body = reinterpret_cast<const uint4*>(src + head);
  const uint64_t nvec = (n - head) / 4;
  for (uint64_t i = tid; i < nvec; i += 2 * kThreads) {
    const bool has_b = i + kThreads < nvec;
    const uint4 a = __ldcs(body + i);
    const uint4 b = has_b ? __ldcs(body + i + kThreads) : make_uint4(0, 0, 0, 0);
    const uint32_t idx[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
    for (int g = 0; g < 8; g += kPending) {
      uint64_t u[kPending];
      bool ok[kPending];
#pragma unroll
      for (int k = 0; k < kPending; ++k) {
        u[k] = v.misalign + uint64_t{idx[g + k]};
        ok[k] = g + k < 4 || has_b;
      }
      UpdateRemote<L, C, kPending, kDedup, kGuessZero>(v, u, ok);
    }
  }
  const uint64_t done = head + nvec * 4;
  if (tid < n - done) {
    const uint64_t u[1] = {v.misalign + uint64_t{src[done + tid]}};
    const bool ok[1] = {true};
    UpdateRemote<L, C, 1, kDedup, kGuessZero>(v, u, ok);
  }
}

// This block's share of an (x, y) item, one pair per thread at a time; the outflow is
// added (per warp) only when count_outflow (pass 0).
template <ResidentLane L, int C, int kThreads, bool kDedup, bool kGuessZero>
__device__ void FoldPairShare(const ResidentView& v, const AxisView& ax, const float* src, uint64_t n,
                              bool count_outflow, HistogramOutflow* o) {
  uint32_t out[5] = {0, 0, 0, 0, 0};
  for (uint64_t i = threadIdx.x; i < n; i += kThreads) {
    uint32_t r = 0, c = 0;
    const bool ok[1] = {ax.Bin(src[2 * i], src[2 * i + 1], &r, &c, out)};
    const uint64_t u[1] = {v.misalign + uint64_t{r} * ax.cols + c};
    UpdateRemote<L, C, 1, kDedup, kGuessZero>(v, u, ok);
  }
  if (!count_outflow) return;
  unsigned long long* fields[5] = {&o->binned, &o->x_underflow, &o->x_overflow, &o->y_underflow,
                                   &o->y_overflow};
#pragma unroll
  for (int k = 0; k < 5; ++k) {
    const uint32_t s = __reduce_add_sync(0xffffffffu, out[k]);
    if ((threadIdx.x & 31) == 0 && s != 0) atomicAdd(fields[k], static_cast<unsigned long long>(s));
  }
}

// Merges this block's lanes of the unit into the global bins and zeroes them again.
template <ResidentLane L, int C, int kThreads>
__device__ void MergeSlice(const ResidentView& v, const ResidentGeometry& g, uint8_t* bins, uint64_t nbins,
                           uint32_t rank) {
  uint8_t* base = bins - g.misalign;  // 16-byte aligned
  const uint64_t end_u = g.misalign + nbins;
  const uint32_t cap4 = Replicate4(v.cap), cap2 = v.cap * 0x00010001u;
  const uint32_t chunks = g.slice / 16;
  for (uint32_t c = threadIdx.x; c < chunks; c += kThreads) {
    uint32_t inc[4];
    if constexpr (L == ResidentLane::k8Cas) {
      uint4* p = reinterpret_cast<uint4*>(v.lanes) + c;
      const uint4 x = *p;
      if ((x.x | x.y | x.z | x.w) == 0) continue;
      *p = make_uint4(0, 0, 0, 0);
      inc[0] = x.x, inc[1] = x.y, inc[2] = x.z, inc[3] = x.w;
    } else if constexpr (L == ResidentLane::k16Gated) {
      uint4* p = reinterpret_cast<uint4*>(v.lanes) + 2 * c;
      const uint4 x = p[0], y = p[1];
      if ((x.x | x.y | x.z | x.w | y.x | y.y | y.z | y.w) == 0) continue;
      p[0] = make_uint4(0, 0, 0, 0);
      p[1] = make_uint4(0, 0, 0, 0);
      inc[0] = PackClampedLanes16(x.x, x.y, cap2);
      inc[1] = PackClampedLanes16(x.z, x.w, cap2);
      inc[2] = PackClampedLanes16(y.x, y.y, cap2);
      inc[3] = PackClampedLanes16(y.z, y.w, cap2);
    } else {
      uint4* p = reinterpret_cast<uint4*>(v.lanes) + 4 * c;
      bool any = false;
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const uint4 x = p[k];
        any |= (x.x | x.y | x.z | x.w) != 0;
        inc[k] = min(x.x, v.cap) | min(x.y, v.cap) << 8 | min(x.z, v.cap) << 16 | min(x.w, v.cap) << 24;
      }
      if (!any) continue;
#pragma unroll
      for (int k = 0; k < 4; ++k) p[k] = make_uint4(0, 0, 0, 0);
    }
    const uint32_t granule = c >> 4, sub = c & 15u;  // 16 chunks of 16 lanes per granule
    const uint64_t u0 = v.pass_lo + (uint64_t{granule * C + rank} << 8) + sub * 16u;
    if (u0 >= g.misalign && u0 + 16 <= end_u) {  // wholly this unit's: plain load + store
      uint4* gp = reinterpret_cast<uint4*>(base + u0);
      uint4 old = __ldcg(gp);
      old.x = SaturatingAddBytes(old.x, inc[0], cap4);
      old.y = SaturatingAddBytes(old.y, inc[1], cap4);
      old.z = SaturatingAddBytes(old.z, inc[2], cap4);
      old.w = SaturatingAddBytes(old.w, inc[3], cap4);
      __stcg(gp, old);
      continue;
    }
#pragma unroll
    for (int k = 0; k < 4; ++k) {  // a chunk shared with a neighbour: exact CAS per word
      uint32_t mask = 0;
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        const uint64_t pos = u0 + 4 * k + b;
        if (pos >= g.misalign && pos < end_u) mask |= 0xFFu << (8 * b);
      }
      const uint32_t add = inc[k] & mask;
      if (add == 0) continue;
      uint32_t* wp = reinterpret_cast<uint32_t*>(base + u0 + 4 * k);
      MergeWordFrom(wp, add, cap4, LoadThroughL2(wp));
    }
  }
}

// The whole persistent block; `lanes` holds p.capacity lanes of kind L (zeroed here once,
// and again by every merge).
template <ResidentLane L, int C, int kThreads, int kPending, bool kDedup, bool kGuessZero>
__device__ void ClusterResidentBlock(const ResidentParams& p, uint32_t* lanes) {
  static_assert(L != ResidentLane::k16Gated || 255 + C * kThreads * kPending < 65536,
                "16-bit lanes could carry (see the bound above)");
  namespace cg = cooperative_groups;
  __shared__ int s_item;
  __shared__ uint32_t s_pass;
  const uint32_t tid = threadIdx.x;
  const uint32_t rank = cg::this_cluster().block_rank();
  const uint32_t cluster_id = blockIdx.x / C, clusters = gridDim.x / C;
  const uint32_t vecs = p.capacity * ResidentLaneBytes(L) / 16;
  for (uint32_t i = tid; i < vecs; i += kThreads) reinterpret_cast<uint4*>(lanes)[i] = make_uint4(0, 0, 0, 0);
  cg::this_cluster().sync();  // no block writes into another's lanes before they are clear
  const uint32_t total_units = p.unit_start[p.work_count];
  for (uint32_t q = cluster_id; q < total_units; q += clusters) {
    if (tid == 0) {
      int lo = 0, hi = p.work_count - 1;  // last item whose first unit is <= q
      while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (p.unit_start[mid] <= q) lo = mid; else hi = mid - 1;
      }
      s_item = lo;
      s_pass = q - p.unit_start[lo];
    }
    __syncthreads();
    const int leader = s_item;
    const uint32_t pass = s_pass;
    const HistogramWork lead = p.work[leader];
    const uint64_t nbins = uint64_t{lead.rows} * lead.cols;
    const ResidentGeometry g =
        ResidentGeometry::For(reinterpret_cast<uintptr_t>(lead.bins), nbins, C, p.capacity);
    const ResidentView v{uint64_t{pass} * g.span, g.span, lead.cap, g.misalign, lanes};
    for (int j = leader; j >= 0; j = p.next_same[j]) {
      const HistogramWork it = p.work[j];
      const uint64_t per = it.count / C, extra = it.count % C;
      const uint64_t b = per * rank + (rank < extra ? rank : extra);
      const uint64_t n = per + (rank < extra ? 1 : 0);
      if (it.kind == 0) {
        FoldIndexShare<L, C, kThreads, kPending, kDedup, kGuessZero>(v, p.samples + it.sample_offset + b, n);
        if (pass == 0 && rank == 0 && tid == 0 && it.count != 0)
          atomicAdd(&p.outflow[j].binned, static_cast<unsigned long long>(it.count));
      } else {
        const float* f = reinterpret_cast<const float*>(p.samples + it.sample_offset) + 2 * b;
        FoldPairShare<L, C, kThreads, kDedup, kGuessZero>(v, AxisView(it), f, n, pass == 0, p.outflow + j);
      }
    }
    cg::this_cluster().sync();  // every remote update of the unit is done and visible
    MergeSlice<L, C, kThreads>(v, g, lead.bins, nbins, rank);
    cg::this_cluster().sync();  // lanes are zero again before anyone folds the next unit
  }
}

}  // namespace histd::cuda::histogram
