#include "engine/cpu/cpu_read.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/cpu/cpu_compute.h"

namespace histd {
namespace {

// Bins per task for the streaming loops: ~64 KiB, so a 2M-bin histogram makes 32 tasks.
constexpr uint64_t kBinsPerTask = 1 << 16;

uint64_t CeilDiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

uint64_t RowsPerTask(uint64_t bins_per_row) {
  return std::max<uint64_t>(1, kBinsPerTask / std::max<uint64_t>(1, bins_per_row));
}

// The pool (sum or max) of each block of the region (engine/read_blocks.h): output row i
// (block row), column j (block column), written as Out.
template <typename Out, PoolOp kPool>
void ReadBlocks(const uint8_t* bins, const HistogramShape& shape, const ReadSpec& spec,
                Out* out, ThreadPool& pool) {
  const Region& region = spec.region;
  const BlockAxis row_blocks = ReadRowBlocks(spec), col_blocks = ReadColBlocks(spec);
  const uint64_t out_rows = row_blocks.count(), out_cols = col_blocks.count();
  const uint64_t bins_per_block_row = row_blocks.largest_block() * region.cols();
  pool.ParallelFor(out_rows, RowsPerTask(bins_per_block_row), [&](uint64_t i0, uint64_t i1) {
    for (uint64_t i = i0; i < i1; ++i) {
      const uint64_t r0 = region.row_begin + row_blocks.begin(i);
      const uint64_t r1 = region.row_begin + row_blocks.end(i);
      for (uint64_t j = 0; j < out_cols; ++j) {
        const uint64_t c0 = region.col_begin + col_blocks.begin(j);
        const uint64_t c1 = region.col_begin + col_blocks.end(j);
        uint64_t acc = 0;  // a sum fits in uint32 (CheckReadSpec), a max in uint8
        for (uint64_t r = r0; r < r1; ++r) {
          const uint8_t* row = bins + r * shape.cols;
          for (uint64_t c = c0; c < c1; ++c) {
            if constexpr (kPool == PoolOp::kSum) {
              acc += row[c];
            } else {
              acc = std::max<uint64_t>(acc, row[c]);
            }
          }
        }
        const uint64_t at = spec.transpose ? j * out_rows + i : i * out_cols + j;
        out[at] = static_cast<Out>(acc);
      }
    }
  });
}

}  // namespace

void CpuReadBins(const uint8_t* bins, const HistogramShape& shape, const ReadSpec& spec,
                 void* out, ThreadPool& pool) {
  const Region& region = spec.region;
  if (ReadBinsType(spec) == DType::kU32) {
    ReadBlocks<uint32_t, PoolOp::kSum>(bins, shape, spec, static_cast<uint32_t*>(out), pool);
    return;
  }
  if (!ReadBinsAsStored(spec)) {  // max pooling of blocks of more than one bin
    ReadBlocks<uint8_t, PoolOp::kMax>(bins, shape, spec, static_cast<uint8_t*>(out), pool);
    return;
  }
  const uint8_t* first = bins + uint64_t{region.row_begin} * shape.cols + region.col_begin;
  if (spec.transpose) {
    TransposeElements(first, region.rows(), region.cols(), shape.cols, 1, out, pool);
    return;
  }
  auto* dst = static_cast<uint8_t*>(out);
  const uint64_t cols = region.cols();
  pool.ParallelFor(region.rows(), RowsPerTask(cols), [&](uint64_t r0, uint64_t r1) {
    for (uint64_t r = r0; r < r1; ++r) std::memcpy(dst + r * cols, first + r * shape.cols, cols);
  });
}

HistogramSummary CpuSummarize(const uint8_t* bins, const HistogramShape& shape,
                              ThreadPool& pool) {
  const uint64_t n = shape.bins();
  std::vector<HistogramSummary> partial(CeilDiv(n, kBinsPerTask));
  pool.ParallelFor(n, kBinsPerTask, [&](uint64_t b, uint64_t e) {
    uint64_t total = 0, saturated = 0;
    for (uint64_t i = b; i < e; ++i) {
      total += bins[i];
      saturated += bins[i] == shape.cap;
    }
    partial[b / kBinsPerTask] = HistogramSummary{saturated, total};
  });
  HistogramSummary summary;
  for (const HistogramSummary& p : partial) {
    summary.saturated_bins += p.saturated_bins;
    summary.total_count += p.total_count;
  }
  return summary;
}

void CpuMerge(const uint8_t* source, uint8_t* target, uint64_t n, uint8_t cap,
              ThreadPool& pool) {
  // No __restrict: source == target is allowed, and each bin reads both before writing.
  pool.ParallelFor(n, kBinsPerTask, [&](uint64_t b, uint64_t e) {
    for (uint64_t i = b; i < e; ++i) {
      const unsigned sum = unsigned{target[i]} + unsigned{source[i]};
      target[i] = static_cast<uint8_t>(std::min<unsigned>(sum, cap));
    }
  });
}

void CpuReset(uint8_t* bins, uint64_t n, ThreadPool& pool) {
  pool.ParallelFor(n, kBinsPerTask * 16,
                   [&](uint64_t b, uint64_t e) { std::memset(bins + b, 0, e - b); });
}

void CpuReadAndReset(uint8_t* bins, uint64_t n, void* out, ThreadPool& pool) {
  auto* dst = static_cast<uint8_t*>(out);
  pool.ParallelFor(n, kBinsPerTask * 16, [&](uint64_t b, uint64_t e) {
    std::memcpy(dst + b, bins + b, e - b);
    std::memset(bins + b, 0, e - b);
  });
}

}  // namespace histd
