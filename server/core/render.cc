#include "server/core/render.h"

#include <cstdint>
#include <memory>
#include <utility>

#include "absl/strings/str_format.h"
#include "server/core/png_encode.h"
#include "server/core/pooled_view.h"

namespace histd::server {

absl::StatusOr<RenderedPng> RenderHistogram(Engine& engine, HistogramStore& store,
                                            MemoryBudget& budget, const RenderSpec& spec,
                                            uint32_t max_side) {
  if (absl::Status s = CheckHeatmapOptions(spec.heatmap, max_side); !s.ok()) return s;
  absl::StatusOr<std::shared_ptr<HistogramEntry>> entry = store.Find(spec.name);
  if (!entry.ok()) return entry.status();
  const HistogramSpec& histogram = (*entry)->spec();
  ViewRequest request;
  request.region = ResolveRegion(spec.region, histogram.shape);
  request.rows = spec.heatmap.height;
  request.cols = spec.heatmap.width;
  request.pool = spec.pool;
  request.mark_saturated = true;
  absl::StatusOr<PooledView> view = ReadPooledView(engine, budget, **entry, request);
  if (!view.ok()) return view.status();

  // The image and what drawing it takes, and the PNG.
  const HeatmapFrame f = FrameFor(spec.heatmap);
  absl::StatusOr<MemoryCharge> charge = budget.Charge(
      HeatmapDrawBytes(spec.heatmap) + PngBytesBound(spec.heatmap.width + f.left + f.right,
                                                     spec.heatmap.height + f.top + f.bottom),
      absl::StrFormat("a %u x %u render of '%s'", spec.heatmap.width, spec.heatmap.height,
                      spec.name));
  if (!charge.ok()) return charge.status();

  RenderedPng out;
  out.region = view->region;
  out.view_rows = view->rows;
  out.view_cols = view->cols;
  Image image = DrawHeatmap(*view, histogram, spec.heatmap, &out.z);
  view = absl::InternalError("released");  // the pooled view's buffers and charge
  absl::StatusOr<std::string> png = EncodePng(image);
  if (!png.ok()) return png.status();
  out.png = *std::move(png);
  out.width = image.width;
  out.height = image.height;
  return out;
}

}  // namespace histd::server
