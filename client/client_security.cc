#include "client/client_security.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/client_interceptor.h>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace histd::client {
namespace {

absl::StatusOr<std::string> ReadFile(const char* flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::FailedPreconditionError(absl::StrCat(flag, "=", path, ": cannot be read"));
  }
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Adds the bearer token to every call's initial metadata.
class BearerTokenInterceptor final : public grpc::experimental::Interceptor {
 public:
  explicit BearerTokenInterceptor(const std::string* header) : header_(header) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->insert({"authorization", *header_});
    }
    methods->Proceed();
  }

 private:
  const std::string* header_;
};

class BearerTokenInterceptorFactory final
    : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit BearerTokenInterceptorFactory(const std::string& token)
      : header_(absl::StrCat("Bearer ", token)) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo* /*info*/) override {
    return new BearerTokenInterceptor(&header_);
  }

 private:
  const std::string header_;  // lives as long as the channel, which owns the factory
};

}  // namespace

absl::StatusOr<ClientSecurity> LoadClientSecurity(const ClientSecurityFiles& files) {
  ClientSecurity out;
  out.tls = files.tls || !files.tls_ca.empty() || !files.tls_cert.empty() ||
            !files.tls_key.empty() || !files.tls_server_name.empty();
  if (files.tls_cert.empty() != files.tls_key.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together: give both or neither");
  }
  if (!files.tls_ca.empty()) {
    absl::StatusOr<std::string> pem = ReadFile("--tls_ca", files.tls_ca);
    if (!pem.ok()) return pem.status();
    out.ca_pem = *std::move(pem);
  }
  if (!files.tls_cert.empty()) {
    absl::StatusOr<std::string> cert = ReadFile("--tls_cert", files.tls_cert);
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = ReadFile("--tls_key", files.tls_key);
    if (!key.ok()) return key.status();
    out.cert_pem = *std::move(cert);
    out.key_pem = *std::move(key);
  }
  out.server_name = files.tls_server_name;
  if (!files.token_file.empty()) {
    absl::StatusOr<std::string> token = ReadFile("--token_file", files.token_file);
    if (!token.ok()) return token.status();
    out.token = std::string(absl::StripAsciiWhitespace(*token));
    if (out.token.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("--token_file=", files.token_file, " is empty"));
    }
  } else if (const char* env = std::getenv("HISTD_TOKEN"); env != nullptr) {
    out.token = std::string(absl::StripAsciiWhitespace(env));
  }
  return out;
}

std::shared_ptr<grpc::Channel> CreateChannel(const std::string& target,
                                             const ClientSecurity& security,
                                             grpc::ChannelArguments args) {
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (security.tls) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = security.ca_pem;
    ssl.pem_cert_chain = security.cert_pem;
    ssl.pem_private_key = security.key_pem;
    credentials = grpc::SslCredentials(ssl);
    if (!security.server_name.empty()) args.SetSslTargetNameOverride(security.server_name);
  } else {
    credentials = grpc::InsecureChannelCredentials();
  }
  if (security.token.empty()) return grpc::CreateCustomChannel(target, credentials, args);
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<BearerTokenInterceptorFactory>(security.token));
  return grpc::experimental::CreateCustomChannelWithInterceptors(target, credentials, args,
                                                                 std::move(interceptors));
}

const char* FailureKind(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kUnauthenticated:
      return "credentials";
    case absl::StatusCode::kPermissionDenied:
      return "role";
    case absl::StatusCode::kUnavailable: {
      const std::string message = absl::AsciiStrToLower(status.message());
      for (const char* word : {"handshake", "ssl", "tls", "certificate"}) {
        if (absl::StrContains(message, word)) return "certificate";
      }
      return "connection";
    }
    default:
      return nullptr;
  }
}

}  // namespace histd::client
