#include "server/grpc/authorize_call.h"

#include <grpc/grpc_security_constants.h>
#include <grpcpp/security/auth_context.h>

#include <memory>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace histd::server {

Credentials CallCredentials(const grpc::ServerContextBase& context) {
  Credentials credentials;
  credentials.peer = context.peer();
  const auto& metadata = context.client_metadata();
  const auto found = metadata.find("authorization");
  if (found != metadata.end()) {
    absl::string_view value(found->second.data(), found->second.size());
    // RFC 6750: the scheme is case-insensitive; anything else is presented as is (and
    // matches no digest).
    if (value.size() > 7 && absl::EqualsIgnoreCase(value.substr(0, 7), "bearer ")) {
      value = absl::StripLeadingAsciiWhitespace(value.substr(7));
    }
    credentials.bearer_token = std::string(value);
  }
  const std::shared_ptr<const grpc::AuthContext> auth = context.auth_context();
  if (auth != nullptr && auth->IsPeerAuthenticated()) {
    for (const char* property : {GRPC_X509_CN_PROPERTY_NAME, GRPC_X509_SAN_PROPERTY_NAME}) {
      for (const grpc::string_ref& value : auth->FindPropertyValues(property)) {
        credentials.subjects.emplace_back(value.data(), value.size());
      }
    }
  }
  return credentials;
}

absl::Status AuthorizeCall(const ServiceContext& ctx, const grpc::ServerContextBase& context,
                           absl::string_view method) {
  if (ctx.access == nullptr) return absl::OkStatus();
  return ctx.access->Authorize(CallCredentials(context), method).status();
}

}  // namespace histd::server
