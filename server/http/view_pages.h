// The read-only pages for looking at histograms (docs/rendering.md):
//   /                              the page: the histograms with their counters
//   /histogram/<name>              the same page, on one histogram: its heatmap refreshed
//                                  every few seconds, row and column projections, log/linear,
//                                  zoom by dragging a rectangle (server/http/view_page.cc:
//                                  one HTML/CSS/JS page, nothing fetched from elsewhere)
//   /render/<name>.png?width=&height=&rows=a:b&cols=c:d&scale=linear|log&zmin=&zmax=
//                     &pool=sum|max&bare=0|1
//                                  a PNG heatmap (server/core/render.h); width and height 0
//                                  or absent: the region's bins, at most 1024
//   /api/histograms                JSON: every histogram's spec and ingest counters
//   /api/view/<name>?rows=a:b&cols=c:d&out_rows=&out_cols=&pool=sum|max
//                                  JSON: the region's pooled view (projections use 1 x n
//                                  and n x 1 views)
// A range a:b is half-open; either side may be empty (the dimension's start or end).
// Errors: 400 for a bad parameter (INVALID_ARGUMENT), 404 for an unknown histogram, 429
// beyond --max_concurrent_queries or a budget, 503 for UNAVAILABLE; the body
// names the problem. Renders and views hold a query permit while they run, like RPCs.
// The daemon adds these routes once its store and engine exist (HttpServer::AddRoutes).
//
// Thread safety: handlers run concurrently on the HTTP server's threads; `ctx` must outlive
// the routes' server.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "server/core/render.h"
#include "server/core/service_context.h"
#include "server/http/http_server.h"

namespace histd::server {

void AddViewPages(ServiceContext* ctx, HttpRoutes* routes);

// The render a /render/<name>.png request asks for (name from the path, without ".png").
// Exposed for tests.
absl::StatusOr<RenderSpec> RenderSpecFromQuery(const std::string& name,
                                               const std::multimap<std::string, std::string>& params,
                                               const HistogramShape& shape);

// The page (HTML with its CSS and JavaScript inline).
extern const char kViewPageHtml[];

}  // namespace histd::server
