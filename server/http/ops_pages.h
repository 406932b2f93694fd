// The operations pages of the HTTP endpoint:
//   /metrics  the registry in Prometheus text format 0.0.4
//   /healthz  200 "ok" while the process serves HTTP (liveness)
//   /readyz   200 "ready" while serving RPCs; 503 naming the state while starting, restoring
//             the snapshot or draining on SIGTERM (readiness, startup)
// Thread safety: the registry and readiness are thread-safe; both outlive the routes' server.
#pragma once

#include "server/http/http_server.h"
#include "server/core/metrics.h"
#include "server/core/readiness.h"

namespace histd::server {

void AddOpsPages(const metrics::Registry* registry, const Readiness* readiness,
                 HttpRoutes* routes);

}  // namespace histd::server
