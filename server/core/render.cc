#include "server/core/render.h"

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

  // The widened view (8 + 1 bytes a cell), the image, and the PNG (at most the image's
  // bytes plus zlib's and the chunks' overhead: stored blocks add 5 bytes per 64 KiB).
  const uint64_t cells = view->rows * view->cols;
  const uint64_t image_bytes = HeatmapImageBytes(spec.heatmap);
  absl::StatusOr<MemoryCharge> charge = budget.Charge(
      cells * 9 + image_bytes + image_bytes + image_bytes / 1024 + 4096,
      absl::StrFormat("a %u x %u render of '%s'", spec.heatmap.width, spec.heatmap.height,
                      spec.name));
  if (!charge.ok()) return charge.status();

  RenderedPng out;
  out.region = view->region;
  out.view_rows = view->rows;
  out.view_cols = view->cols;
  Image image;
  {
    const HeatmapView heatmap = ToHeatmapView(*view, histogram);
    view = absl::InternalError("released");  // the pooled view's buffers and charge
    image = DrawHeatmap(heatmap, spec.heatmap, &out.z);
  }
  absl::StatusOr<std::string> png = EncodePng(image);
  if (!png.ok()) return png.status();
  out.png = *std::move(png);
  out.width = image.width;
  out.height = image.height;
  return out;
}

}  // namespace histd::server
