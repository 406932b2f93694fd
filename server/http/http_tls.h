// TLS for the HTTP endpoint (--http_tls): the gRPC port's certificate and key, re-read when
// their files change, and its client CA when given (client certificates then required).
//
//   HttpTls::Create(cert, key, client_ca)  reads and checks the files (PEM parses, the key
//       belongs to the certificate); FAILED_PRECONDITION naming the file otherwise.
//   Configure(ctx)  sets up an OpenSSL context for cpp-httplib's SSLServer: each handshake
//       takes the current certificate (files checked at most once a second; a pair that no
//       longer loads keeps the last good one in use), TLS 1.2 at least.
// Thread safety: handshakes on any thread; the pair is swapped whole under a mutex.
#pragma once

#include <openssl/ssl.h>

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace histd::server {

class HttpTls {
 public:
  static absl::StatusOr<std::shared_ptr<HttpTls>> Create(std::string cert_file,
                                                         std::string key_file,
                                                         std::string client_ca_file);
  bool Configure(SSL_CTX& ctx);

  struct KeyPair;

 private:
  HttpTls(std::string cert_file, std::string key_file, std::string client_ca_file);
  std::shared_ptr<const KeyPair> Current();
  static int OnCertificate(SSL* ssl, void* self);

  const std::string cert_file_, key_file_, client_ca_file_;
  absl::Mutex mu_;
  std::shared_ptr<const KeyPair> pair_ ABSL_GUARDED_BY(mu_);
  std::string stamp_ ABSL_GUARDED_BY(mu_);  // mtimes and sizes of the files loaded
  absl::Time checked_ ABSL_GUARDED_BY(mu_);
};

}  // namespace histd::server
