#include "server/http/page_access.h"

#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace histd::server {

Credentials HttpCredentials(const HttpRequest& request) {
  Credentials credentials;
  credentials.peer = request.remote_address;
  const std::string header = request.header("authorization");
  if (header.empty()) return credentials;
  const absl::string_view value = header;
  if (value.size() > 7 && absl::EqualsIgnoreCase(value.substr(0, 7), "bearer ")) {
    credentials.bearer_token = std::string(absl::StripLeadingAsciiWhitespace(value.substr(7)));
    return credentials;
  }
  std::string decoded;
  if (value.size() > 6 && absl::EqualsIgnoreCase(value.substr(0, 6), "basic ") &&
      absl::Base64Unescape(absl::StripLeadingAsciiWhitespace(value.substr(6)), &decoded)) {
    const size_t colon = decoded.find(':');
    credentials.bearer_token = colon == std::string::npos ? decoded : decoded.substr(colon + 1);
    return credentials;
  }
  credentials.bearer_token = header;  // matches no digest
  return credentials;
}

HttpHandler RequireRole(AccessControl* access, Role role, HttpHandler page) {
  return [access, role, page = std::move(page)](const HttpRequest& request) {
    const absl::StatusOr<Identity> identity = access->AuthorizeRole(
        HttpCredentials(request), absl::StrCat("HTTP ", request.method, " ", request.path), role);
    if (identity.ok()) return page(request);
    const bool unauthenticated = absl::IsUnauthenticated(identity.status());
    HttpResponse refused = HttpResponse::Text(
        unauthenticated ? 401 : 403, absl::StrCat(identity.status().message(), "\n"));
    if (unauthenticated) refused.headers.emplace_back("WWW-Authenticate", "Basic realm=\"histd\"");
    return refused;
  };
}

}  // namespace histd::server
