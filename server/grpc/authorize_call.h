// The gRPC side of access control: reads what a call presents and asks AccessControl.
//
//   AuthorizeCall(ctx, context, method)  OK when the daemon has no tokens file (every
//       client that got through the transport may call everything), else the identity's
//       verdict for the full method name: UNAUTHENTICATED or PERMISSION_DENIED with a message
//       for the caller. Every service method calls it first and finishes with its status,
//       so a refusal passes through the server interceptors like any other status.
// Credentials: the `authorization` metadata ("Bearer <token>"), and the CN and SANs of a
// client certificate that the TLS handshake verified (--tls_client_ca).
// Thread safety: as AccessControl.
#pragma once

#include <grpcpp/server_context.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "server/core/access_control.h"
#include "server/core/service_context.h"

namespace histd::server {

Credentials CallCredentials(const grpc::ServerContextBase& context);

absl::Status AuthorizeCall(const ServiceContext& ctx, const grpc::ServerContextBase& context,
                           absl::string_view method);

}  // namespace histd::server
