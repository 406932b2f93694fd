#include "server/http/ops_pages.h"

#include <string>

namespace histd::server {

void AddOpsPages(const metrics::Registry* registry, const Readiness* readiness,
                 HttpRoutes* routes) {
  routes->Add("/metrics", [registry](const HttpRequest&) {
    HttpResponse r = HttpResponse::Text(200, registry->Render());
    r.content_type = metrics::kTextContentType;
    return r;
  });
  routes->Add("/healthz", [](const HttpRequest&) { return HttpResponse::Text(200, "ok\n"); });
  routes->Add("/readyz", [readiness](const HttpRequest&) {
    const LifeState state = readiness->state();
    if (state == LifeState::kServing) return HttpResponse::Text(200, "ready\n");
    return HttpResponse::Text(503, std::string("not ready: ") + Readiness::Name(state) + "\n");
  });
}

}  // namespace histd::server
