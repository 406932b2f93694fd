#include "server/grpc/transport_security.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/security/tls_certificate_provider.h>
#include <grpcpp/security/tls_credentials_options.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace histd::server {
namespace {

absl::StatusOr<std::string> ReadFile(const char* flag, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::FailedPreconditionError(absl::StrFormat("%s=%s: cannot be read", flag, path));
  }
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string OpenSslError() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "not PEM";
  char buf[256];
  ERR_error_string_n(code, buf, sizeof(buf));
  return buf;
}

// The certificates of a PEM file (at least one), or FAILED_PRECONDITION naming the file.
absl::Status CheckCertificates(const char* flag, const std::string& path, X509** first) {
  absl::StatusOr<std::string> pem = ReadFile(flag, path);
  if (!pem.ok()) return pem.status();
  BIO* bio = BIO_new_mem_buf(pem->data(), static_cast<int>(pem->size()));
  int count = 0;
  while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
    if (count++ == 0 && first != nullptr) {
      *first = cert;
    } else {
      X509_free(cert);
    }
  }
  ERR_clear_error();  // the loop ends on "no start line"
  BIO_free(bio);
  if (count == 0) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s=%s: no PEM certificate in it", flag, path));
  }
  return absl::OkStatus();
}

absl::Status CheckKeyPair(const Options::Security& s) {
  X509* cert = nullptr;
  if (absl::Status st = CheckCertificates("--tls_cert", s.tls_cert_file, &cert); !st.ok()) return st;
  absl::StatusOr<std::string> pem = ReadFile("--tls_key", s.tls_key_file);
  if (!pem.ok()) {
    X509_free(cert);
    return pem.status();
  }
  BIO* bio = BIO_new_mem_buf(pem->data(), static_cast<int>(pem->size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  absl::Status status;
  if (key == nullptr) {
    status = absl::FailedPreconditionError(absl::StrFormat(
        "--tls_key=%s: not an unencrypted PEM private key (%s)", s.tls_key_file, OpenSslError()));
  } else if (X509_check_private_key(cert, key) != 1) {
    ERR_clear_error();
    status = absl::FailedPreconditionError(absl::StrFormat(
        "--tls_key=%s does not belong to the certificate in --tls_cert=%s", s.tls_key_file,
        s.tls_cert_file));
  }
  EVP_PKEY_free(key);
  X509_free(cert);
  return status;
}

// Serves reflection on one server, or not. Linking gRPC's reflection library registers its
// plugin for every server of the process (a static initializer), so this option removes
// that one and adds its own when enabled.
class ReflectionBuilderOption final : public grpc::ServerBuilderOption {
 public:
  explicit ReflectionBuilderOption(bool enabled) : enabled_(enabled) {}
  void UpdateArguments(grpc::ChannelArguments* /*args*/) override {}
  void UpdatePlugins(std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>* plugins) override {
    auto reflection = std::make_unique<grpc::reflection::ProtoServerReflectionPlugin>();
    const std::string name = reflection->name();
    plugins->erase(std::remove_if(plugins->begin(), plugins->end(),
                                  [&](const auto& p) { return p->name() == name; }),
                   plugins->end());
    if (enabled_) plugins->push_back(std::move(reflection));
  }

 private:
  const bool enabled_;
};

}  // namespace

bool IsLoopbackAddress(const std::string& address) {
  if (absl::StartsWith(address, "unix:") || absl::StartsWith(address, "unix-abstract:")) {
    return true;
  }
  std::string host = address;
  if (absl::StartsWith(host, "[")) {
    const size_t close = host.find(']');
    host = close == std::string::npos ? host : host.substr(1, close - 1);
  } else if (const size_t colon = host.rfind(':'); colon != std::string::npos) {
    host = host.substr(0, colon);
  }
  return host == "localhost" || host == "::1" || absl::StartsWith(host, "127.");
}

absl::Status CheckProtectedMode(const Options& o) {
  const Options::Security& s = o.security;
  if (s.allow_insecure) return absl::OkStatus();
  // The HTTP endpoint has no TLS; its histogram pages are closed only by identities.
  if (!o.http.address.empty() && !IsLoopbackAddress(o.http.address) &&
      s.auth_tokens_file.empty()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "protected mode: --http_address=%s is reachable from other hosts, and without "
        "--auth_tokens_file its pages show every histogram to anyone who reaches it. Give "
        "--auth_tokens_file (its pages then need a reader's token; docs/security.md), or bind "
        "it to 127.0.0.1, or pass --allow_insecure to serve it open on purpose",
        o.http.address));
  }
  if (IsLoopbackAddress(o.address) || !s.tls_cert_file.empty() || !s.auth_tokens_file.empty()) {
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(absl::StrFormat(
      "protected mode: --address=%s is reachable from other hosts, and the daemon has neither "
      "TLS nor identities, so anyone who reaches the port could read, change and delete every "
      "histogram. Configure TLS (--tls_cert and --tls_key, and --tls_client_ca for client "
      "certificates) and/or bearer tokens with roles (--auth_tokens_file); see "
      "docs/security.md. Or bind 127.0.0.1, or pass --allow_insecure to serve it open on "
      "purpose",
      o.address));
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const Options::Security& s) {
  if (s.tls_cert_file.empty() != s.tls_key_file.empty()) {
    return absl::InvalidArgumentError("--tls_cert and --tls_key go together: give both or neither");
  }
  if (s.tls_cert_file.empty()) {
    if (!s.tls_client_ca_file.empty()) {
      return absl::InvalidArgumentError(
          "--tls_client_ca needs TLS: give --tls_cert and --tls_key as well");
    }
    return grpc::InsecureServerCredentials();
  }
  if (s.tls_reload_interval < absl::Seconds(1)) {
    return absl::InvalidArgumentError("the TLS reload interval must be at least 1s");
  }
  if (absl::Status st = CheckKeyPair(s); !st.ok()) return st;
  if (!s.tls_client_ca_file.empty()) {
    if (absl::Status st = CheckCertificates("--tls_client_ca", s.tls_client_ca_file, nullptr);
        !st.ok()) {
      return st;
    }
  }
  const unsigned int interval =
      static_cast<unsigned int>(std::min<int64_t>(absl::ToInt64Seconds(s.tls_reload_interval), 86400));
  auto provider = std::make_shared<grpc::experimental::FileWatcherCertificateProvider>(
      s.tls_key_file, s.tls_cert_file, s.tls_client_ca_file, interval);
  grpc::experimental::TlsServerCredentialsOptions options(provider);
  options.watch_identity_key_cert_pairs();
  if (!s.tls_client_ca_file.empty()) {
    options.watch_root_certs();
    options.set_cert_request_type(GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  } else {
    options.set_cert_request_type(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  }
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::experimental::TlsServerCredentials(options);
  if (credentials == nullptr) return absl::InternalError("gRPC refused the TLS options");
  return credentials;
}

std::unique_ptr<grpc::ServerBuilderOption> ReflectionOption(bool enabled) {
  return std::make_unique<ReflectionBuilderOption>(enabled);
}

std::string DescribeSecurity(const Options::Security& s) {
  std::string out = s.tls_cert_file.empty()          ? "plaintext"
                    : s.tls_client_ca_file.empty() ? "TLS"
                                                   : "mutual TLS";
  if (!s.auth_tokens_file.empty()) absl::StrAppend(&out, ", roles from ", s.auth_tokens_file);
  return out;
}

}  // namespace histd::server
