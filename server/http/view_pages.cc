#include "server/http/view_pages.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "server/core/pooled_view.h"

namespace histd::server {
namespace {

constexpr uint32_t kDefaultPixels = 1024;

HttpResponse FromStatus(const absl::Status& status) {
  int code = 500;
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument: code = 400; break;
    case absl::StatusCode::kNotFound: code = 404; break;
    case absl::StatusCode::kResourceExhausted: code = 429; break;
    case absl::StatusCode::kUnavailable: code = 503; break;
    default: break;
  }
  return HttpResponse::Text(code, absl::StrCat(absl::StatusCodeToString(status.code()), ": ",
                                               status.message(), "\n"));
}

std::optional<std::string> Param(const std::multimap<std::string, std::string>& params,
                                 const std::string& key) {
  auto it = params.find(key);
  if (it == params.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

absl::StatusOr<uint32_t> UintParam(const std::multimap<std::string, std::string>& params,
                                   const std::string& key, uint32_t absent) {
  std::optional<std::string> text = Param(params, key);
  if (!text) return absent;
  uint32_t v;
  if (!absl::SimpleAtoi(*text, &v)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s must be a non-negative integer, got '%s'", key, *text));
  }
  return v;
}

absl::StatusOr<std::optional<double>> DoubleParam(
    const std::multimap<std::string, std::string>& params, const std::string& key) {
  std::optional<std::string> text = Param(params, key);
  if (!text) return std::optional<double>();
  double v;
  if (!absl::SimpleAtod(*text, &v) || !std::isfinite(v)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s must be a finite number, got '%s'", key, *text));
  }
  return std::optional<double>(v);
}

// "a:b", ":b", "a:", "" over `extent` bins: [begin, end), checked later against the shape.
absl::Status RangeParam(const std::multimap<std::string, std::string>& params,
                        const std::string& key, uint32_t extent, uint32_t* begin, uint32_t* end) {
  *begin = 0;
  *end = extent;
  std::optional<std::string> text = Param(params, key);
  if (!text) return absl::OkStatus();
  std::pair<std::string, std::string> parts = absl::StrSplit(*text, absl::MaxSplits(':', 1));
  if (text->find(':') == std::string::npos ||
      (!parts.first.empty() && !absl::SimpleAtoi(parts.first, begin)) ||
      (!parts.second.empty() && !absl::SimpleAtoi(parts.second, end))) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s must be BEGIN:END (either may be empty), got '%s'", key, *text));
  }
  return absl::OkStatus();
}

absl::StatusOr<Region> RegionParams(const std::multimap<std::string, std::string>& params,
                                    const HistogramShape& shape) {
  Region region;
  if (absl::Status s = RangeParam(params, "rows", shape.rows, &region.row_begin, &region.row_end);
      !s.ok()) {
    return s;
  }
  if (absl::Status s = RangeParam(params, "cols", shape.cols, &region.col_begin, &region.col_end);
      !s.ok()) {
    return s;
  }
  return region;
}

absl::StatusOr<PoolOp> PoolParam(const std::multimap<std::string, std::string>& params) {
  const std::string pool = Param(params, "pool").value_or("sum");
  if (pool == "sum") return PoolOp::kSum;
  if (pool == "max") return PoolOp::kMax;
  return absl::InvalidArgumentError(absl::StrFormat("pool must be sum or max, got '%s'", pool));
}

std::string Number(double v) { return absl::StrFormat("%.9g", v); }

std::string AxisJson(const std::optional<AxisRange>& axis) {
  if (!axis) return "null";
  return absl::StrCat("[", Number(axis->lo), ",", Number(axis->hi), "]");
}

// Runs `body` with the daemon's context (and a query permit), or answers why it cannot.
template <typename Body>
HttpResponse WithContext(ServiceContext* ctx, bool needs_permit, Body body) {
  std::optional<ConcurrencyLimit::Permit> permit;
  if (needs_permit) {
    absl::StatusOr<ConcurrencyLimit::Permit> p = ctx->queries.TryAcquire();
    if (!p.ok()) return FromStatus(p.status());
    permit.emplace(*std::move(p));
  }
  absl::StatusOr<HttpResponse> response = body(*ctx);
  if (!response.ok()) return FromStatus(response.status());
  return *std::move(response);
}

HttpResponse Page(const HttpRequest&) {
  HttpResponse r = HttpResponse::Text(200, kViewPageHtml);
  r.content_type = "text/html; charset=utf-8";
  r.headers.emplace_back("Cache-Control", "no-cache");
  return r;
}

absl::StatusOr<HttpResponse> ListHistograms(ServiceContext& ctx) {
  std::string json = "[";
  bool first = true;
  for (const std::shared_ptr<HistogramEntry>& entry : ctx.store->List()) {
    const HistogramSpec& spec = entry->spec();
    const IngestCounters c = entry->counters();
    absl::StrAppend(&json, first ? "" : ",", "\n{\"name\":\"", spec.name,
                    "\",\"rows\":", spec.shape.rows, ",\"cols\":", spec.shape.cols,
                    ",\"cap\":", spec.shape.cap, ",\"x\":", AxisJson(spec.x_axis),
                    ",\"y\":", AxisJson(spec.y_axis), ",\"samples_applied\":", c.samples_applied,
                    ",\"samples_rejected\":", c.samples_rejected,
                    ",\"messages_applied\":", c.messages_applied,
                    ",\"messages_rejected\":", c.messages_rejected,
                    ",\"samples_outside\":", c.samples_outside, ",\"x_nan\":", c.x_nan,
                    ",\"y_nan\":", c.y_nan, "}");
    first = false;
  }
  json += "\n]\n";
  HttpResponse r = HttpResponse::Text(200, std::move(json));
  r.content_type = "application/json";
  return r;
}

absl::StatusOr<HttpResponse> View(ServiceContext& ctx, const HttpRequest& request) {
  absl::StatusOr<std::shared_ptr<HistogramEntry>> entry = ctx.store->Find(request.path_rest);
  if (!entry.ok()) return entry.status();
  const HistogramShape& shape = (*entry)->spec().shape;
  ViewRequest view;
  absl::StatusOr<Region> region = RegionParams(request.params, shape);
  if (!region.ok()) return region.status();
  view.region = *region;
  absl::StatusOr<PoolOp> pool = PoolParam(request.params);
  if (!pool.ok()) return pool.status();
  view.pool = *pool;
  const uint32_t max = ctx.options->render.max_pixels;
  absl::StatusOr<uint32_t> rows = UintParam(request.params, "out_rows", 1);
  if (!rows.ok()) return rows.status();
  absl::StatusOr<uint32_t> cols = UintParam(request.params, "out_cols", 1);
  if (!cols.ok()) return cols.status();
  if (*rows > max || *cols > max) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "out_rows and out_cols must be at most %u (--max_render_pixels), got %u x %u", max,
        *rows, *cols));
  }
  view.rows = *rows;
  view.cols = *cols;
  absl::StatusOr<PooledView> pooled = ReadPooledView(*ctx.engine, *ctx.host_budget, **entry, view);
  if (!pooled.ok()) return pooled.status();
  const Region& g = pooled->region;
  std::string json = absl::StrCat("{\"rows\":", pooled->rows, ",\"cols\":", pooled->cols,
                                  ",\"region\":[", g.row_begin, ",", g.row_end, ",", g.col_begin,
                                  ",", g.col_end, "],\"values\":[");
  json.reserve(json.size() + pooled->rows * pooled->cols * 4);
  for (uint64_t i = 0; i < pooled->rows * pooled->cols; ++i) {
    absl::StrAppend(&json, i == 0 ? "" : ",", pooled->value(i));
  }
  json += "]}\n";
  HttpResponse r = HttpResponse::Text(200, std::move(json));
  r.content_type = "application/json";
  return r;
}

absl::StatusOr<HttpResponse> Render(ServiceContext& ctx, const HttpRequest& request) {
  std::string name = request.path_rest;
  if (name.size() <= 4 || name.compare(name.size() - 4, 4, ".png") != 0) {
    return absl::NotFoundError(absl::StrFormat("/render/%s: renders are /render/<name>.png", name));
  }
  name.resize(name.size() - 4);
  absl::StatusOr<std::shared_ptr<HistogramEntry>> entry = ctx.store->Find(name);
  if (!entry.ok()) return entry.status();
  absl::StatusOr<RenderSpec> spec = RenderSpecFromQuery(name, request.params, (*entry)->spec().shape);
  if (!spec.ok()) return spec.status();
  absl::StatusOr<RenderedPng> png =
      RenderHistogram(*ctx.engine, *ctx.store, *ctx.host_budget, *spec, ctx.options->render.max_pixels);
  if (!png.ok()) return png.status();
  HttpResponse r;
  r.status = 200;
  r.content_type = "image/png";
  r.body = std::move(png->png);
  r.headers.emplace_back("Cache-Control", "no-store");
  // What was drawn, for pages that label or zoom it.
  const Region& g = png->region;
  r.headers.emplace_back("X-Histd-Region", absl::StrFormat("%u:%u,%u:%u", g.row_begin, g.row_end,
                                                           g.col_begin, g.col_end));
  r.headers.emplace_back("X-Histd-Z", absl::StrCat(Number(png->z.zmin), ",", Number(png->z.zmax)));
  return r;
}

}  // namespace

absl::StatusOr<RenderSpec> RenderSpecFromQuery(const std::string& name,
                                               const std::multimap<std::string, std::string>& params,
                                               const HistogramShape& shape) {
  RenderSpec spec;
  spec.name = name;
  absl::StatusOr<Region> region = RegionParams(params, shape);
  if (!region.ok()) return region.status();
  spec.region = *region;
  absl::StatusOr<PoolOp> pool = PoolParam(params);
  if (!pool.ok()) return pool.status();
  spec.pool = *pool;
  const std::string scale = Param(params, "scale").value_or("linear");
  if (scale == "linear") {
    spec.heatmap.scale = ColorScale::kLinear;
  } else if (scale == "log") {
    spec.heatmap.scale = ColorScale::kLog;
  } else {
    return absl::InvalidArgumentError(absl::StrFormat("scale must be linear or log, got '%s'", scale));
  }
  // Defaults from the region as given (an inverted one is refused by the read).
  const uint32_t region_cols = region->col_end > region->col_begin ? region->cols() : 1;
  const uint32_t region_rows = region->row_end > region->row_begin ? region->rows() : 1;
  absl::StatusOr<uint32_t> width = UintParam(params, "width", 0);
  if (!width.ok()) return width.status();
  absl::StatusOr<uint32_t> height = UintParam(params, "height", 0);
  if (!height.ok()) return height.status();
  spec.heatmap.width = *width != 0 ? *width : std::min(region_cols, kDefaultPixels);
  spec.heatmap.height = *height != 0 ? *height : std::min(region_rows, kDefaultPixels);
  absl::StatusOr<std::optional<double>> zmin = DoubleParam(params, "zmin");
  if (!zmin.ok()) return zmin.status();
  absl::StatusOr<std::optional<double>> zmax = DoubleParam(params, "zmax");
  if (!zmax.ok()) return zmax.status();
  spec.heatmap.zmin = *zmin;
  spec.heatmap.zmax = *zmax;
  const std::string bare = Param(params, "bare").value_or("0");
  if (bare != "0" && bare != "1") {
    return absl::InvalidArgumentError(absl::StrFormat("bare must be 0 or 1, got '%s'", bare));
  }
  spec.heatmap.frame = bare == "0";
  return spec;
}

void AddViewPages(ServiceContext* ctx, HttpRoutes* routes) {
  routes->Add("/", Page);
  routes->AddPrefix("/histogram/", Page);
  routes->Add("/api/histograms", [ctx](const HttpRequest&) {
    return WithContext(ctx, false, [](ServiceContext& c) { return ListHistograms(c); });
  });
  routes->AddPrefix("/api/view/", [ctx](const HttpRequest& request) {
    return WithContext(ctx, true, [&request](ServiceContext& c) { return View(c, request); });
  });
  routes->AddPrefix("/render/", [ctx](const HttpRequest& request) {
    return WithContext(ctx, true, [&request](ServiceContext& c) { return Render(c, request); });
  });
}

}  // namespace histd::server
