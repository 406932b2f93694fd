// Access control for the HTTP endpoint's pages that show histograms (the web page, its
// API, renders), with the identities of --auth_tokens_file (server/core/access_control.h).
//
//   RequireRole(access, Role::kReader, page)  a handler that answers only a caller whose
//       identity has that role: 401 with `WWW-Authenticate: Basic` (so a browser asks) for
//       missing or unknown credentials, 403 for a smaller role; else the page's answer.
// Credentials: `Authorization: Bearer <token>`, or Basic authentication whose password is
// the token (any user name), which browsers offer. The refusal is counted and logged by
// AccessControl like a gRPC one. The probes and /metrics stay open (server/grpc/server.cc).
// Thread safety: as AccessControl.
#pragma once

#include "server/core/access_control.h"
#include "server/http/http_server.h"

namespace histd::server {

Credentials HttpCredentials(const HttpRequest& request);

HttpHandler RequireRole(AccessControl* access, Role role, HttpHandler page);

}  // namespace histd::server
