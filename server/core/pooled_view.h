// A pooled view: a histogram's region reduced by the engine to at most rows x cols cells,
// each the sum or the maximum of its block of bins (ReadSpec's exact-size cut, see
// kernels/read_blocks.h: cell i of n over R bins covers [floor(i R / n), floor((i + 1) R / n))).
// What renders (server/core/render.h, drawn by server/core/heatmap.h) and Watch streams are
// made of. Knows nothing of gRPC.
//
// Sizes: a dimension of the view has min(requested, bins in the region) cells (a view never
// has more cells than bins). Its bytes are charged to the host budget before the engine
// writes them and stay charged while the PooledView lives.
//
// Thread safety: ReadPooledView may run on any number of threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "server/core/histogram_store.h"
#include "server/core/memory_budget.h"

namespace histd::server {

struct ViewRequest {
  Region region;          // must be inside the histogram and non-empty
  uint32_t rows = 0;      // requested cells, >= 1
  uint32_t cols = 0;
  PoolOp pool = PoolOp::kSum;
  // Also find the cells that hold a bin at cap (a max-pooled read beside a summed one).
  bool mark_saturated = false;
};

struct PooledView {
  Region region;
  uint64_t rows = 0, cols = 0;
  PoolOp pool = PoolOp::kSum;
  DType dtype = DType::kU32;     // kU32 sums, kU8 maxima
  std::vector<uint8_t> values;   // rows * cols elements of dtype, row-major, little-endian
  // rows * cols, when mark_saturated, pool is kSum and some cell sums to cap or more (else
  // no cell holds a bin at cap).
  std::vector<uint8_t> maxima;
  MemoryCharge charge;           // values and maxima, against the host budget

  uint64_t value(uint64_t cell) const;
};

// The whole histogram when `region` is all zero (the API's convention), else `region`.
Region ResolveRegion(const Region& region, const HistogramShape& shape);

// INVALID_ARGUMENT for a region outside the histogram, an empty one, or zero cells;
// RESOURCE_EXHAUSTED beyond the budget.
absl::StatusOr<PooledView> ReadPooledView(Engine& engine, MemoryBudget& budget,
                                          const HistogramEntry& entry, const ViewRequest& request);

}  // namespace histd::server
