#include "engine/cuda/histogram_ops.h"

#include <algorithm>

#include "kernels/common/cuda_status.h"

namespace histd::cuda {
namespace {

constexpr int kThreads = 256;

int GridFor(uint64_t work, uint64_t per_block, int max_blocks = 132 * 16) {
  const uint64_t blocks = (work + per_block - 1) / per_block;
  return static_cast<int>(std::max<uint64_t>(1, std::min<uint64_t>(blocks, max_blocks)));
}

// Four bins per 32-bit word where aligned; __vaddus4 saturates each byte at 255, then the
// per-byte minimum with the cap.
__global__ void MergeSaturatingKernel(const uint8_t* __restrict__ source, uint8_t* target,
                                      uint64_t bins, uint8_t cap) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  const uint64_t tid = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const bool aligned = (reinterpret_cast<uintptr_t>(source) % 4 == 0) &&
                       (reinterpret_cast<uintptr_t>(target) % 4 == 0);
  uint64_t done = 0;
  if (aligned) {
    const uint32_t cap4 = 0x01010101u * cap;
    const uint64_t words = bins / 4;
    const uint32_t* s4 = reinterpret_cast<const uint32_t*>(source);
    uint32_t* t4 = reinterpret_cast<uint32_t*>(target);
    for (uint64_t i = tid; i < words; i += stride) t4[i] = __vminu4(__vaddus4(t4[i], s4[i]), cap4);
    done = words * 4;
  }
  for (uint64_t i = done + tid; i < bins; i += stride) {
    const unsigned sum = unsigned{target[i]} + source[i];
    target[i] = static_cast<uint8_t>(sum < cap ? sum : cap);
  }
}

// One thread per output element: the sum or max of its block (engine/read_blocks.h: by
// factor, partial at the edges, or one of exactly `cells` blocks). A warp's threads take
// neighbouring blocks of one block row, so each bin row they read is one contiguous span.
// Output index is row-major in the (possibly transposed) output shape.
template <typename Out, bool kMax>
__global__ void ReadRegionKernel(const uint8_t* __restrict__ bins, uint32_t cols, Region region,
                                 BlockAxis row_blocks, BlockAxis col_blocks, bool transpose,
                                 Out* __restrict__ out) {
  const uint64_t block_rows = row_blocks.count(), block_cols = col_blocks.count();
  const uint64_t total = block_rows * block_cols;
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t o = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; o < total; o += stride) {
    // Walk blocks in block-row-major order whatever the output order, for the reads.
    const uint64_t i = o / block_cols, j = o % block_cols;
    const uint64_t r0 = region.row_begin + row_blocks.begin(i);
    const uint64_t r1 = region.row_begin + row_blocks.end(i);
    const uint64_t c0 = region.col_begin + col_blocks.begin(j);
    const uint64_t c1 = region.col_begin + col_blocks.end(j);
    uint32_t acc = 0;  // a sum fits (CheckReadSpec), a max is a bin
    for (uint64_t y = r0; y < r1; ++y) {
      const uint8_t* row = bins + y * cols;
      for (uint64_t x = c0; x < c1; ++x) acc = kMax ? max(acc, uint32_t{row[x]}) : acc + row[x];
    }
    out[transpose ? j * block_rows + i : o] = static_cast<Out>(acc);
  }
}

__global__ void SummarizeKernel(const uint8_t* __restrict__ bins, uint64_t count, uint8_t cap,
                                unsigned long long* summary) {
  unsigned long long saturated = 0, total = 0;
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride) {
    const uint8_t v = bins[i];
    saturated += (v == cap);
    total += v;
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    saturated += __shfl_down_sync(0xffffffffu, saturated, offset);
    total += __shfl_down_sync(0xffffffffu, total, offset);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicAdd(&summary[0], saturated);
    atomicAdd(&summary[1], total);
  }
}

__global__ void WidenToFloatKernel(const uint8_t* __restrict__ bins, uint64_t count,
                                   float* __restrict__ out) {
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  for (uint64_t i = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x; i < count; i += stride)
    out[i] = static_cast<float>(bins[i]);
}

}  // namespace

absl::Status LaunchWidenToFloat(const uint8_t* bins, uint64_t count, float* out,
                                cudaStream_t stream) {
  if (count == 0) return absl::OkStatus();
  WidenToFloatKernel<<<GridFor(count, kThreads * 8), kThreads, 0, stream>>>(bins, count, out);
  return CheckLaunch("WidenToFloatKernel", stream);
}

absl::Status LaunchMergeSaturating(const uint8_t* source, uint8_t* target, uint64_t bins,
                                   uint8_t cap, cudaStream_t stream) {
  if (bins == 0) return absl::OkStatus();
  MergeSaturatingKernel<<<GridFor(bins, kThreads * 16), kThreads, 0, stream>>>(source, target,
                                                                                bins, cap);
  return CheckLaunch("MergeSaturatingKernel", stream);
}

absl::Status LaunchReadRegion(const uint8_t* bins, uint32_t cols, const ReadSpec& spec, void* out,
                              cudaStream_t stream) {
  const uint64_t out_rows = ReadBinsRows(spec), out_cols = ReadBinsCols(spec);
  const uint64_t total = out_rows * out_cols;
  if (total == 0) return absl::OkStatus();
  const int grid = GridFor(total, kThreads * 4);
  const BlockAxis row_blocks = ReadRowBlocks(spec), col_blocks = ReadColBlocks(spec);
  if (ReadBinsType(spec) == DType::kU32) {
    ReadRegionKernel<uint32_t, false><<<grid, kThreads, 0, stream>>>(
        bins, cols, spec.region, row_blocks, col_blocks, spec.transpose,
        static_cast<uint32_t*>(out));
  } else {  // the bins as stored (one-bin blocks) or max pooling
    ReadRegionKernel<uint8_t, true><<<grid, kThreads, 0, stream>>>(
        bins, cols, spec.region, row_blocks, col_blocks, spec.transpose,
        static_cast<uint8_t*>(out));
  }
  return CheckLaunch("ReadRegionKernel", stream);
}

namespace {

// Items by value: a batch has a few region items; more go in several launches.
constexpr int kCheckItemsPerLaunch = 64;
struct CheckList {
  SampleCheckItem items[kCheckItemsPerLaunch];
};
static_assert(sizeof(CheckList) <= 4096, "kernel parameters are limited to 4 KiB");

__device__ __forceinline__ bool IsNan(uint32_t bits) {
  return (bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0;
}

// blockIdx.y: the item; blocks stride over its samples. Atomics only where something was
// found (a bad index, a NaN), once per warp.
__global__ void CheckSamplesKernel(const uint32_t* __restrict__ samples, CheckList list,
                                   SampleVerdict* verdicts) {
  const SampleCheckItem item = list.items[blockIdx.y];
  const uint32_t* s = samples + item.word_offset;
  const uint64_t stride = uint64_t{gridDim.x} * blockDim.x;
  const uint64_t first = uint64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  unsigned long long a = 0, b = 0, from_end = 0;  // indices: bad, -, first; pairs: x, y NaNs
  if (item.kind == 0) {
    for (uint64_t i = first; i < item.count; i += stride) {
      if (s[i] >= item.bins) {
        ++a;
        from_end = max(from_end, static_cast<unsigned long long>(item.count - i));
      }
    }
  } else {
    for (uint64_t i = first; i < item.count; i += stride) {
      a += IsNan(s[2 * i]);
      b += IsNan(s[2 * i + 1]);
    }
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    a += __shfl_down_sync(0xffffffffu, a, offset);
    b += __shfl_down_sync(0xffffffffu, b, offset);
    from_end = max(from_end, __shfl_down_sync(0xffffffffu, from_end, offset));
  }
  if ((threadIdx.x & 31) != 0 || (a == 0 && b == 0)) return;
  SampleVerdict* v = verdicts + item.work;
  if (item.kind == 0) {
    atomicAdd(&v->invalid, a);
    atomicMax(&v->first_from_end, from_end);
  } else {
    atomicAdd(&v->x_nan, a);
    atomicAdd(&v->y_nan, b);
  }
}

// One thread per item, after CheckSamplesKernel: an item with a bad index applies nothing.
__global__ void RejectInvalidKernel(const uint32_t* __restrict__ samples, CheckList list, int n,
                                    HistogramWork* work, SampleVerdict* verdicts) {
  const int k = threadIdx.x;
  if (k >= n) return;
  const SampleCheckItem item = list.items[k];
  SampleVerdict* v = verdicts + item.work;
  if (item.kind != 0 || v->invalid == 0) return;
  v->first_value = samples[item.word_offset + (item.count - v->first_from_end)];
  work[item.work].count = 0;
}

}  // namespace

absl::Status LaunchCheckSamples(const uint32_t* samples, const SampleCheckItem* items, int n,
                                HistogramWork* work, SampleVerdict* verdicts,
                                cudaStream_t stream) {
  for (int first = 0; first < n; first += kCheckItemsPerLaunch) {
    const int count = std::min(kCheckItemsPerLaunch, n - first);
    CheckList list{};
    uint64_t largest = 0;
    for (int i = 0; i < count; ++i) {
      list.items[i] = items[first + i];
      largest = std::max(largest, items[first + i].count);
    }
    if (largest == 0) continue;
    const dim3 grid(GridFor(largest, kThreads * 8, 256), count);
    CheckSamplesKernel<<<grid, kThreads, 0, stream>>>(samples, list, verdicts);
    HISTD_RETURN_IF_ERROR(CheckLaunch("CheckSamplesKernel", stream));
    RejectInvalidKernel<<<1, kCheckItemsPerLaunch, 0, stream>>>(samples, list, count, work,
                                                                 verdicts);
    HISTD_RETURN_IF_ERROR(CheckLaunch("RejectInvalidKernel", stream));
  }
  return absl::OkStatus();
}

absl::Status LaunchSummarize(const uint8_t* bins, uint64_t count, uint8_t cap,
                             unsigned long long* summary, cudaStream_t stream) {
  if (count == 0) return absl::OkStatus();
  SummarizeKernel<<<GridFor(count, kThreads * 16), kThreads, 0, stream>>>(bins, count, cap,
                                                                          summary);
  return CheckLaunch("SummarizeKernel", stream);
}

}  // namespace histd::cuda
