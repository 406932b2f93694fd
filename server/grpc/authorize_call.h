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
#include <grpcpp/support/server_callback.h>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "server/core/access_control.h"
#include "server/core/service_context.h"
#include "server/grpc/status_util.h"

namespace histd::server {

Credentials CallCredentials(const grpc::ServerContextBase& context);

absl::Status AuthorizeCall(const ServiceContext& ctx, const grpc::ServerContextBase& context,
                           absl::string_view method);

// A server-streaming call finished at once with `status` (a refusal), for methods whose
// stream has no refusal of its own.
template <typename Response>
grpc::ServerWriteReactor<Response>* RefusedWriteStream(const absl::Status& status) {
  class Refused final : public grpc::ServerWriteReactor<Response> {
   public:
    explicit Refused(const absl::Status& s) { this->Finish(ToGrpcStatus(s)); }
    void OnDone() override { delete this; }
  };
  return new Refused(status);
}

}  // namespace histd::server
