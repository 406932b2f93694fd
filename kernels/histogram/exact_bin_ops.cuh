// Exact saturating updates: 16-bit on-chip counters and one-byte global bins.
// Block/warp building blocks of the histogram kernels; no policy here.
//
// ---- 16-bit lanes with accept-by-old-value (IncrementLane16) -------------------------
// A lane is one 16-bit half of a 32-bit shared-memory word. To count one hit:
//   old = atomicAdd(word, 1 << shift);  accept iff lane(old) < cap;  else atomicSub(word, 1 << shift).
// Claim: the number of accepted hits is exactly min(cap, hits), and the lane never carries
// into the other half of the word.
// Proof. All atomics on the word are totally ordered. Write lane = A + P, where A counts
// accepted adds and P counts rejected adds not yet reverted (pending). Consider the first
// rejection in that order: no earlier rejection exists, so P = 0 before it and the lane it
// read was A >= cap; A never exceeds cap (an add is accepted only when A + P < cap, i.e.
// A < cap), so A == cap at that moment and, A being non-decreasing and bounded, forever
// after. Hence every rejection happens when A == cap already, and every hit before that is
// accepted: A = min(cap, hits) at the end (when P = 0 again). The lane's largest value is
// cap + P, and P is at most the number of add/revert pairs in flight at once, i.e. at most
// (threads of the block) x (lanes a thread updates before reverting) <= 1024 x 8, so
// lane <= 255 + 8192 < 65536: it never carries into its neighbour (static_assert below).
// A plain read first that sees lane >= cap may skip the atomics: a value the lane held
// at some point, >= cap, means A == cap already (P > 0 implies A == cap; P == 0 means
// A == lane >= cap). Skipping saves the atomics on saturated hot bins.
// The same scheme is WRONG for 8-bit lanes: cap + P can reach 256 (with cap = 255, a single
// pending overshoot), the byte wraps and carries into the neighbour byte, and a concurrent
// reader of either byte decides on a corrupted value. Hence global byte bins use CAS below.
//
// ---- one-byte global bins (IncrementByte / MergeWord) --------------------------------
// Bins are bytes inside 32-bit words. An update reads the word (through L2: L1 is not
// coherent with other SMs' atomics), computes the new word with every byte saturated at
// cap, and installs it with atomicCAS, retrying with the value CAS returned. Only the
// bytes being updated change and each changes from b to max(b, min(cap, b + inc)) <= 255,
// so no carry ever leaves a byte; a byte already >= cap is left unchanged. Exactness of
// the composition: min(cap, min(cap, s + a) + b) = min(cap, s + a + b) for a, b >= 0, so
// any interleaving of saturating adds (misses, window merges, other work items) gives
// min(cap, s + total). Words may straddle the histogram's ends (any alignment): bytes
// outside it get increment 0 and are rewritten with the value CAS saw, i.e. unchanged.
// Every word (and 16-byte chunk) the kernels touch holds a bin of the histogram, so their
// accesses stay inside the 16-byte chunks that hold its bins: the allocation must cover
// them (the padding contract, engine/cuda/cuda_histogram.h).
#pragma once

#include <cstdint>

namespace histd::cuda::histogram {

// The bound used in the proof above: threads per block x lanes pending per thread.
constexpr int kMaxThreadsPerBlockForLanes = 1024;
constexpr int kMaxPendingLanesPerThread = 8;
static_assert(255 + kMaxThreadsPerBlockForLanes * kMaxPendingLanesPerThread < 65536,
              "16-bit lanes could carry into their neighbour");

// ---------------------------------------------------------------- shared 16-bit lanes
// lanes: shared memory, lane k in word k / 2 at bit 16 * (k % 2).
__device__ __forceinline__ uint32_t LaneValue(uint32_t word, uint32_t shift) {
  return (word >> shift) & 0xFFFFu;
}

__device__ __forceinline__ void IncrementLane16(uint32_t* lanes, uint32_t k, uint32_t cap) {
  uint32_t* word = lanes + (k >> 1);
  const uint32_t shift = (k & 1u) << 4;
  // Skip saturated lanes with a plain read (see the proof: any value the lane held >= cap
  // means the accepted count is already cap).
  if (LaneValue(*reinterpret_cast<volatile uint32_t*>(word), shift) >= cap) return;
  const uint32_t one = 1u << shift;
  const uint32_t old = atomicAdd(word, one);
  if (LaneValue(old, shift) >= cap) atomicSub(word, one);
}

// Predicated shared-memory operations on 32-bit shared addresses (cvta.to.shared of the
// lanes): the fold issues them without a branch per lane and without recomputing the
// shared window's base per access, which the compiler does for generic pointers when
// registers are short (H100 SASS of the default config: ~12 instructions per increment).
__device__ __forceinline__ uint32_t SharedLoadIf(bool pred, uint32_t addr) {
  uint32_t v = 0;
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %2, 0;\n\t@p ld.volatile.shared.u32 %0, [%1];\n\t}"
               : "+r"(v) : "r"(addr), "r"(static_cast<uint32_t>(pred)) : "memory");
  return v;
}
__device__ __forceinline__ uint32_t SharedLoad16If(bool pred, uint32_t addr) {  // zero-extended
  uint32_t v = 0;
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %2, 0;\n\t@p ld.volatile.shared.u16 %0, [%1];\n\t}"
               : "+r"(v) : "r"(addr), "r"(static_cast<uint32_t>(pred)) : "memory");
  return v;
}
__device__ __forceinline__ uint32_t SharedFetchAddIf(bool pred, uint32_t addr, uint32_t x, uint32_t otherwise) {
  uint32_t old = otherwise;
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %3, 0;\n\t@p atom.shared.add.u32 %0, [%1], %2;\n\t}"
               : "+r"(old) : "r"(addr), "r"(x), "r"(static_cast<uint32_t>(pred)) : "memory");
  return old;
}
__device__ __forceinline__ void SharedAddIf(bool pred, uint32_t addr, uint32_t x) {
  asm volatile("{\n\t.reg .pred p;\n\tsetp.ne.b32 p, %2, 0;\n\t@p red.shared.add.u32 [%0], %1;\n\t}"
               :: "r"(addr), "r"(x), "r"(static_cast<uint32_t>(pred)) : "memory");
}
// The same, always issued, on a generic pointer known to point to shared memory (the sort
// scratch reaches WarpDeferMisses as one; this keeps the atomics ATOMS).
__device__ __forceinline__ uint32_t SharedAddress(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ uint32_t SharedFetchAdd(uint32_t* p, uint32_t x) {
  return SharedFetchAddIf(true, SharedAddress(p), x, 0u);
}
__device__ __forceinline__ void SharedAddAt(uint32_t addr, uint32_t x) {
  asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(addr), "r"(x) : "memory");
}
__device__ __forceinline__ void SharedAdd(uint32_t* p, uint32_t x) { SharedAddAt(SharedAddress(p), x); }

// N lane increments with their reads, adds and reverts each issued back to back (N <=
// kMaxPendingLanesPerThread pending reverts per thread, as the proof assumes). lanes_s: the
// lanes' shared-memory address (__cvta_generic_to_shared).
template <int N>
__device__ __forceinline__ void IncrementLanes16At(uint32_t lanes_s, const uint32_t (&k)[N],
                                                   const bool (&hit)[N], uint32_t cap) {
  static_assert(N <= kMaxPendingLanesPerThread, "more pending reverts than the proof allows");
  uint32_t seen[N];
#pragma unroll
  for (int j = 0; j < N; ++j) seen[j] = SharedLoadIf(hit[j], lanes_s + ((k[j] >> 1) << 2));
  bool issued[N];
#pragma unroll
  for (int j = 0; j < N; ++j) {
    const uint32_t shift = (k[j] & 1u) << 4;
    issued[j] = hit[j] && LaneValue(seen[j], shift) < cap;
    seen[j] = SharedFetchAddIf(issued[j], lanes_s + ((k[j] >> 1) << 2), 1u << shift, seen[j]);
  }
#pragma unroll
  for (int j = 0; j < N; ++j) {
    const uint32_t shift = (k[j] & 1u) << 4;
    SharedAddIf(issued[j] && LaneValue(seen[j], shift) >= cap, lanes_s + ((k[j] >> 1) << 2), 0u - (1u << shift));
  }
}

// ---- 16-bit lanes counted by read-then-add (CountLanes16At) ------------------------
// The hot window's cheaper scheme: read the lane; if it is below cap, add 1 (a fire-and-
// forget red.shared); never look at the old value, never revert. The lane may then end
// ABOVE cap, and whoever reads it clamps: min(cap, lane) (MergeWindow does).
// Claim: min(cap, final lane) = min(cap, hits), and the lane never carries.
// Proof. The lane only grows, by one per add, and every add belongs to a hit. If the final
// lane L is below cap, every read saw a value <= L < cap, so every hit added: L = hits.
// Otherwise L >= cap, and hits >= L (each add is a hit): both sides are cap. Bound: let t0
// be the moment the lane first reaches cap. An add landing after t0 was decided by a read
// before t0 (a later read sees >= cap). A thread's adds to a lane precede, in its program
// order, its next read of that lane, and same-address accesses of one thread keep that
// order; so when one of its reads precedes t0, all its adds decided by earlier reads of the
// lane have landed. At most its last batch is outstanding: N <= kMaxPendingLanesPerThread
// adds per thread, lane <= cap + 1024 x 8 < 65536 (the static_assert above).
// lanes_s: the lanes' shared address; sink_s: a word of shared memory that nobody reads,
// one per lane of the warp (bank-distinct), which takes the adds of samples that count
// nothing, so that the adds need neither a predicate nor a branch (the H100's ptxas turns
// predicated shared atomics into one branch each). kWarpWide: all 32 lanes call together
// and the adds are skipped when no lane of the warp has one (saturated hot bins).
template <int N, bool kWarpWide>
__device__ __forceinline__ void CountLanes16At(uint32_t lanes_s, uint32_t sink_s, const uint32_t (&k)[N],
                                               const bool (&hit)[N], uint32_t cap) {
  static_assert(N <= kMaxPendingLanesPerThread, "more outstanding adds than the proof allows");
  // The lane is read as a u16 at lanes_s + 2k (no shift or mask to extract it); the add
  // goes to its 32-bit word (lanes_s is 4-byte aligned), in the half that holds it.
  uint32_t lane_s[N], seen[N];
#pragma unroll
  for (int j = 0; j < N; ++j) {
    lane_s[j] = lanes_s + 2 * k[j];
    seen[j] = SharedLoad16If(hit[j], lane_s[j]);
  }
  uint32_t addr[N], inc[N];
  bool any = false;
#pragma unroll
  for (int j = 0; j < N; ++j) {
    const bool add = hit[j] && seen[j] < cap;
    addr[j] = add ? lane_s[j] & ~3u : sink_s;
    // 1 << 16 * (k & 1): a funnel shift takes its amount modulo 32, and (lane_s << 3) mod 32
    // is 16 * (k & 1) (lanes_s is 4-byte aligned): two instructions instead of three.
    inc[j] = __funnelshift_l(0u, 1u, lane_s[j] << 3);
    any |= add;
  }
  if (kWarpWide ? __any_sync(0xffffffffu, any) : any) {
#pragma unroll
    for (int j = 0; j < N; ++j) SharedAddAt(addr[j], inc[j]);
  }
}

// As IncrementLanes16At, for lanes named by a generic pointer to shared memory.
template <int N>
__device__ __forceinline__ void IncrementLanes16(uint32_t* lanes, const uint32_t (&k)[N],
                                                 const bool (&hit)[N], uint32_t cap) {
  IncrementLanes16At<N>(SharedAddress(lanes), k, hit, cap);
}

__device__ __forceinline__ uint32_t ReadLane16(const uint32_t* lanes, uint32_t k) {
  return LaneValue(lanes[k >> 1], (k & 1u) << 4);
}

// ---------------------------------------------------------------- global byte bins
__device__ __forceinline__ uint32_t* WordOf(const uint8_t* p, uint32_t* shift) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  *shift = static_cast<uint32_t>(a & 3u) * 8u;
  return reinterpret_cast<uint32_t*>(a & ~uintptr_t{3});
}

__device__ __forceinline__ uint32_t LoadThroughL2(const uint32_t* p) { return __ldcg(p); }

// Every byte b of `word` with increment i (bytes of inc) becomes max(b, min(cap, b + i)).
__device__ __forceinline__ uint32_t SaturatingAddBytes(uint32_t word, uint32_t inc,
                                                       uint32_t cap4) {
  return __vmaxu4(word, __vminu4(__vaddus4(word, inc), cap4));
}

__device__ __forceinline__ uint32_t Replicate4(uint32_t cap) { return cap * 0x01010101u; }

// The first n 16-byte vectors of a block's shared lanes zeroed by the block; no barrier.
template <int kThreads>
__device__ __forceinline__ void ClearLaneVectors(uint4* lanes, uint32_t n) {
  for (uint32_t v = threadIdx.x; v < n; v += kThreads) lanes[v] = make_uint4(0, 0, 0, 0);
}

// Four 16-bit lanes (two words: lanes 0 and 1 in `lo`, 2 and 3 in `hi`), each clamped to
// cap (cap2: cap in both halves), as the four bytes of one word in lane order: how a window's
// lanes, which may pass cap (CountLanes16At), become one-byte counts.
__device__ __forceinline__ uint32_t PackClampedLanes16(uint32_t lo, uint32_t hi, uint32_t cap2) {
  return __byte_perm(__vminu2(lo, cap2), __vminu2(hi, cap2), 0x6420);
}

// Saturating add of `inc` into the word at `w` (bytes as above), exact under any
// concurrency; `seen` is a value the caller already read from *w (a guess; any value works).
__device__ __forceinline__ void MergeWordFrom(uint32_t* w, uint32_t inc, uint32_t cap4,
                                              uint32_t seen) {
  uint32_t cur = seen;
  while (true) {
    const uint32_t next = SaturatingAddBytes(cur, inc, cap4);
    if (next == cur) return;  // every updated byte already at (or above) cap
    const uint32_t prev = atomicCAS(w, cur, next);
    if (prev == cur) return;
    cur = prev;
  }
}

// N independent saturating word merges with their loads and first CAS issued together
// (the latency of a global round trip is paid about twice per batch, not per word).
// active[k] false skips entry k. Entries may name the same word: a stale guess simply
// fails its CAS and retries.
template <int N>
__device__ __forceinline__ void MergeWords(uint32_t* const (&w)[N], const uint32_t (&inc)[N],
                                           const bool (&active)[N], uint32_t cap4) {
  uint32_t seen[N];
#pragma unroll
  for (int k = 0; k < N; ++k) seen[k] = active[k] ? LoadThroughL2(w[k]) : 0u;
  uint32_t next[N];
  bool retry[N];
#pragma unroll
  for (int k = 0; k < N; ++k) {
    retry[k] = false;
    if (!active[k]) continue;
    next[k] = SaturatingAddBytes(seen[k], inc[k], cap4);
    if (next[k] == seen[k]) continue;
    const uint32_t prev = atomicCAS(w[k], seen[k], next[k]);
    retry[k] = prev != seen[k];
    seen[k] = prev;
  }
#pragma unroll
  for (int k = 0; k < N; ++k) {
    if (retry[k]) MergeWordFrom(w[k], inc[k], cap4, seen[k]);
  }
}

// As MergeWords, with words named by 32-bit offsets from one aligned base (half the
// registers of pointers, so eight fit in flight per thread).
// load_first == false skips the load and guesses that the word is 0 (a fresh or sparse
// histogram): one atomic instead of a load plus an atomic when right; when wrong, the
// failed CAS returns the word and the retry proceeds as usual.
template <int N>
__device__ __forceinline__ void MergeWordsAt(uint32_t* base, const uint32_t (&off)[N],
                                             const uint32_t (&inc)[N], const bool (&active)[N],
                                             uint32_t cap4, bool load_first = true) {
  uint32_t seen[N];
#pragma unroll
  for (int k = 0; k < N; ++k) seen[k] = active[k] && load_first ? LoadThroughL2(base + off[k]) : 0u;
  bool retry[N];
#pragma unroll
  for (int k = 0; k < N; ++k) {
    retry[k] = false;
    if (!active[k]) continue;
    const uint32_t next = SaturatingAddBytes(seen[k], inc[k], cap4);
    if (next == seen[k]) continue;
    const uint32_t prev = atomicCAS(base + off[k], seen[k], next);
    retry[k] = prev != seen[k];
    seen[k] = prev;
  }
#pragma unroll
  for (int k = 0; k < N; ++k) {
    if (retry[k]) MergeWordFrom(base + off[k], inc[k], cap4, seen[k]);
  }
}

// One hit on each active byte bin, batched as above.
template <int N>
__device__ __forceinline__ void IncrementBytes(uint8_t* const (&bin)[N], const bool (&active)[N],
                                               uint32_t cap) {
  uint32_t* w[N];
  uint32_t inc[N];
#pragma unroll
  for (int k = 0; k < N; ++k) {
    uint32_t shift = 0;
    w[k] = active[k] ? WordOf(bin[k], &shift) : nullptr;
    inc[k] = 1u << shift;
  }
  MergeWords<N>(w, inc, active, Replicate4(cap));
}

}  // namespace histd::cuda::histogram
