// Roulo's V0..V6 (see roulo_variants.h for what each is and its soft-cap semantics).
#include "experiments/histogram/roulo_variants.h"

#include <cstdint>

#include "absl/strings/str_format.h"
#include "experiments/histogram/tuning_candidates.h"
#include "kernels/common/cuda_status.h"
#include "kernels/common/device_limits.h"
#include "kernels/histogram/exact_bin_ops.cuh"
#include "kernels/histogram/fast_divide.h"

namespace histd::cuda {
namespace histogram {
namespace {

constexpr int kThreads = kRouloThreads;
constexpr size_t kRouloWindowBytes = size_t{kRouloWindowBins} * 2;
static_assert(kRouloWindowBytes + 1024 <= kMaxSharedBytesPerBlock, "V5/V6 window exceeds shared memory");

struct RouloParams {
  const uint32_t* samples;
  uint8_t* bins;
  uint32_t n;             // samples per histogram
  uint32_t bins_per_hist;
  uint32_t rows, cols;
  uint32_t cap;
  uint32_t parts;         // blocks per histogram
  FastDivide by_cols;
  uint32_t wr0, wc0, wh, ww;  // V5/V6 window (rows interleaved over the 4 blocks)
};

// The seed's soft cap: a plain read, then a word atomic on the byte's word.
__device__ __forceinline__ void SoftIncrement(uint8_t* bin, uint32_t cap) {
  if (*bin < cap) {
    uint32_t shift;
    uint32_t* w = WordOf(bin, &shift);
    atomicAdd(w, 1u << shift);
  }
}

// Calls visit(v) for every sample of [src, src + n): scalar, or 16-byte loads with a
// scalar head (to alignment) and tail.
template <bool kVec4, class Visit>
__device__ __forceinline__ void ForEachSample(const uint32_t* src, uint32_t n, Visit visit) {
  const int tid = threadIdx.x;
  if (!kVec4) {
    for (uint32_t i = tid; i < n; i += kThreads) visit(src[i]);
    return;
  }
  uint32_t head = static_cast<uint32_t>((16 - (reinterpret_cast<uintptr_t>(src) & 15)) & 15) / 4;
  if (head > n) head = n;
  if (tid < static_cast<int>(head)) visit(src[tid]);
  const uint4* body = reinterpret_cast<const uint4*>(src + head);
  const uint32_t nvec = (n - head) / 4;
  for (uint32_t i = tid; i < nvec; i += kThreads) {
    const uint4 q = body[i];
    visit(q.x);
    visit(q.y);
    visit(q.z);
    visit(q.w);
  }
  const uint32_t done = head + nvec * 4;
  if (tid < static_cast<int>(n - done)) visit(src[done + tid]);
}

// V0..V4: block `part` of a histogram reads every sample and counts those in its range.
template <bool kVec4>
__global__ void __launch_bounds__(kThreads) RouloRangeKernel(RouloParams p) {
  const uint32_t h = blockIdx.x / p.parts, part = blockIdx.x % p.parts;
  const uint32_t lo = static_cast<uint32_t>(uint64_t{p.bins_per_hist} * part / p.parts);
  const uint32_t hi = static_cast<uint32_t>(uint64_t{p.bins_per_hist} * (part + 1) / p.parts);
  uint8_t* hist = p.bins + uint64_t{h} * p.bins_per_hist;
  const uint32_t cap = p.cap;
  ForEachSample<kVec4>(p.samples + uint64_t{h} * p.n, p.n, [&](uint32_t v) {
    if (v - lo < hi - lo) SoftIncrement(hist + v, cap);
  });
}

// V5/V6: 4 blocks per histogram, rows interleaved, hot window in 16-bit shared lanes.
__global__ void __launch_bounds__(kThreads) RouloWindowKernel(RouloParams p) {
  extern __shared__ uint32_t lanes[];  // kRouloWindowBytes
  const uint32_t h = blockIdx.x / 4, part = blockIdx.x % 4;
  uint8_t* hist = p.bins + uint64_t{h} * p.bins_per_hist;
  const uint32_t cap = p.cap, ww = p.ww, wh = p.wh, wr0 = p.wr0, wc0 = p.wc0;
  const uint32_t local_rows = (wh + 3) / 4;
  const uint32_t nlanes = local_rows * ww;
  for (uint32_t i = threadIdx.x; i < (nlanes + 1) / 2; i += kThreads) lanes[i] = 0;
  __syncthreads();
  ForEachSample<true>(p.samples + uint64_t{h} * p.n, p.n, [&](uint32_t v) {
    const uint32_t row = p.by_cols.Quotient(v);
    if ((row & 3u) != part) return;
    const uint32_t col = v - row * p.cols;
    const uint32_t dr = row - wr0, dc = col - wc0;
    if (dr < wh && dc < ww) {
      const uint32_t k = (dr >> 2) * ww + dc;  // own rows only: dr >> 2 is distinct per row
      uint32_t* word = lanes + (k >> 1);
      const uint32_t shift = (k & 1u) << 4;
      if (LaneValue(*reinterpret_cast<volatile uint32_t*>(word), shift) < cap) atomicAdd(word, 1u << shift);
    } else {
      SoftIncrement(hist + v, cap);
    }
  });
  __syncthreads();
  // Flush: this block alone owns these rows, and its misses never touch window bins.
  for (uint32_t k = threadIdx.x; k < nlanes; k += kThreads) {
    const uint32_t lane = ReadLane16(lanes, k);
    if (lane == 0) continue;
    const uint32_t lr = k / ww, dc = k - lr * ww;
    // The own row with (row - wr0) >> 2 == lr.
    uint32_t row = wr0 + 4 * lr;
    row += (part + 4 - (row & 3u)) & 3u;
    uint8_t* bin = hist + uint64_t{row} * p.cols + wc0 + dc;
    const uint32_t s = *bin;
    if (s < cap) *bin = static_cast<uint8_t>(min(cap, s + lane));
  }
}

}  // namespace
}  // namespace histogram

const char* RouloVariantName(RouloVariant v) {
  static const char* const kNames[] = {"V0", "V1", "V2", "V3", "V4", "V5", "V6"};
  const int i = static_cast<int>(v);
  return i >= 0 && i < kRouloVariantCount ? kNames[i] : "?";
}

const char* RouloVariantDescription(RouloVariant v) {
  static const char* const kText[] = {
      "V0 1 block/histogram, word atomics on bytes",
      "V1 2 blocks/histogram (halves)",
      "V2 4 blocks/histogram (quarters)",
      "V3 8 blocks/histogram (eighths)",
      "V4 V2 + 4 values per load",
      "V5 V4 + interleaved rows + shared hot band",
      "V6 V5 with a centred 2D window",
  };
  const int i = static_cast<int>(v);
  return i >= 0 && i < kRouloVariantCount ? kText[i] : "?";
}

absl::Status CheckRouloArgs(const RouloBatchArgs& a) {
  const uint64_t bins = uint64_t{a.rows} * a.cols;
  if (a.rows == 0 || a.cols == 0 || bins >= (uint64_t{1} << 32))
    return absl::InvalidArgumentError(absl::StrFormat("roulo: bad shape %ux%u", a.rows, a.cols));
  if (a.cap == 0) return absl::InvalidArgumentError("roulo: cap must be 1..255");
  if (a.histograms > 0 && a.samples_per_histogram > 0 && (a.samples == nullptr || a.bins == nullptr))
    return absl::InvalidArgumentError("roulo: null device pointer");
  if (uint64_t{a.histograms} * 8 > (uint64_t{1} << 31))
    return absl::InvalidArgumentError("roulo: too many histograms for one grid");
  return absl::OkStatus();
}

absl::Status RunRouloVariant(RouloVariant v, const RouloBatchArgs& a, cudaStream_t stream) {
  using namespace histogram;  // NOLINT: kernels of this file
  HISTD_RETURN_IF_ERROR(CheckRouloArgs(a));
  if (a.histograms == 0) return absl::OkStatus();
  RouloParams p{};
  p.samples = a.samples;
  p.bins = a.bins;
  p.n = a.samples_per_histogram;
  p.bins_per_hist = a.rows * a.cols;
  p.rows = a.rows;
  p.cols = a.cols;
  p.cap = a.cap;
  p.by_cols = FastDivide::For(a.cols);
  static const uint32_t kParts[] = {1, 2, 4, 8, 4, 4, 4};
  const int vi = static_cast<int>(v);
  if (vi < 0 || vi >= kRouloVariantCount) return absl::InvalidArgumentError("roulo: unknown variant");
  p.parts = kParts[vi];
  const unsigned grid = a.histograms * p.parts;
  if (v == RouloVariant::kV5 || v == RouloVariant::kV6) {
    const uint32_t W = kRouloWindowBins;
    if (v == RouloVariant::kV5) {
      p.ww = a.cols <= W ? a.cols : 0;
      p.wh = p.ww ? 4 * (W / p.ww) : 0;
      if (p.wh > a.rows) p.wh = a.rows;
      const uint32_t c = a.hint_row < a.rows ? a.hint_row : a.rows - 1;
      p.wr0 = c > p.wh / 2 ? c - p.wh / 2 : 0;
      if (p.wr0 > a.rows - p.wh) p.wr0 = a.rows - p.wh;
      p.wc0 = 0;
    } else {
      p.ww = a.hint_window_cols < a.cols ? a.hint_window_cols : a.cols;
      if (p.ww > W) p.ww = W;
      if (p.ww == 0) p.ww = 1;
      p.wh = 4 * (W / p.ww);
      if (p.wh > a.rows) p.wh = a.rows;
      p.wr0 = a.rows / 2 > p.wh / 2 ? a.rows / 2 - p.wh / 2 : 0;
      p.wc0 = a.cols / 2 > p.ww / 2 ? a.cols / 2 - p.ww / 2 : 0;
      if (p.wr0 > a.rows - p.wh) p.wr0 = a.rows - p.wh;
      if (p.wc0 > a.cols - p.ww) p.wc0 = a.cols - p.ww;
    }
    if (p.wh == 0) p.ww = 0;
    HISTD_CUDA_RETURN_IF_ERROR(cudaFuncSetAttribute(
        RouloWindowKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int{kRouloWindowBytes}));
    RouloWindowKernel<<<grid, kThreads, kRouloWindowBytes, stream>>>(p);
    return CheckLaunch("RouloWindowKernel", stream);
  }
  if (v == RouloVariant::kV4) {
    RouloRangeKernel<true><<<grid, kThreads, 0, stream>>>(p);
  } else {
    RouloRangeKernel<false><<<grid, kThreads, 0, stream>>>(p);
  }
  return CheckLaunch("RouloRangeKernel", stream);
}

}  // namespace histd::cuda
