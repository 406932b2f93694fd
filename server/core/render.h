// Renders a histogram (or a region) as a PNG heatmap: the engine pools the region to the
// heatmap's pixel size (server/core/pooled_view.h, sum or max, saturated cells found by a max
// read), server/core/heatmap.h draws it and server/core/png_encode.h encodes it. The one path behind
// the Render RPC, the HTTP /render route and histctl render. Knows nothing of gRPC.
//
// Bounds: width and height in 1..max_side; every buffer (the view, the image and what
// drawing it takes, the PNG) is charged to the host budget before it is allocated.
//
// Thread safety: RenderHistogram may run on any number of threads at once.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "engine/engine.h"
#include "server/core/heatmap.h"
#include "server/core/histogram_store.h"
#include "server/core/memory_budget.h"

namespace histd::server {

struct RenderSpec {
  std::string name;
  Region region;  // all zero: the whole histogram
  PoolOp pool = PoolOp::kSum;
  HeatmapOptions heatmap;
};

struct RenderedPng {
  std::string png;
  uint32_t width = 0, height = 0;  // of the PNG (the heatmap plus its frame)
  Region region;                   // rendered
  uint64_t view_rows = 0, view_cols = 0;
  ZRange z;                        // the colour bar's range
};

absl::StatusOr<RenderedPng> RenderHistogram(Engine& engine, HistogramStore& store,
                                            MemoryBudget& budget, const RenderSpec& spec,
                                            uint32_t max_side);

}  // namespace histd::server
