#include "server/http/http_tls.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/stat.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "server/core/log.h"

namespace histd::server {

struct HttpTls::KeyPair {
  X509* leaf = nullptr;
  STACK_OF(X509)* chain = nullptr;  // the certificates after the leaf
  EVP_PKEY* key = nullptr;
  ~KeyPair() {
    X509_free(leaf);
    sk_X509_pop_free(chain, X509_free);
    EVP_PKEY_free(key);
  }
};

namespace {

std::string Stamp(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return "missing";
  return absl::StrCat(st.st_mtim.tv_sec, ".", st.st_mtim.tv_nsec, "/", st.st_size, "/", st.st_ino);
}

absl::StatusOr<std::shared_ptr<const HttpTls::KeyPair>> LoadPair(const std::string& cert_file,
                                                                 const std::string& key_file) {
  auto pair = std::make_shared<HttpTls::KeyPair>();
  BIO* certs = BIO_new_file(cert_file.c_str(), "r");
  if (certs == nullptr) {
    ERR_clear_error();
    return absl::FailedPreconditionError(absl::StrCat("--tls_cert=", cert_file, ": cannot be read"));
  }
  pair->leaf = PEM_read_bio_X509(certs, nullptr, nullptr, nullptr);
  pair->chain = sk_X509_new_null();
  while (X509* extra = PEM_read_bio_X509(certs, nullptr, nullptr, nullptr)) sk_X509_push(pair->chain, extra);
  BIO_free(certs);
  BIO* key = BIO_new_file(key_file.c_str(), "r");
  if (key != nullptr) {
    pair->key = PEM_read_bio_PrivateKey(key, nullptr, nullptr, nullptr);
    BIO_free(key);
  }
  ERR_clear_error();
  if (pair->leaf == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("--tls_cert=", cert_file, ": no PEM certificate"));
  }
  if (pair->key == nullptr || X509_check_private_key(pair->leaf, pair->key) != 1) {
    ERR_clear_error();
    return absl::FailedPreconditionError(
        absl::StrCat("--tls_key=", key_file, ": not the PEM private key of --tls_cert"));
  }
  return std::shared_ptr<const HttpTls::KeyPair>(std::move(pair));
}

}  // namespace

HttpTls::HttpTls(std::string cert_file, std::string key_file, std::string client_ca_file)
    : cert_file_(std::move(cert_file)),
      key_file_(std::move(key_file)),
      client_ca_file_(std::move(client_ca_file)) {}

absl::StatusOr<std::shared_ptr<HttpTls>> HttpTls::Create(std::string cert_file,
                                                         std::string key_file,
                                                         std::string client_ca_file) {
  std::shared_ptr<HttpTls> tls(
      new HttpTls(std::move(cert_file), std::move(key_file), std::move(client_ca_file)));
  absl::StatusOr<std::shared_ptr<const KeyPair>> pair = LoadPair(tls->cert_file_, tls->key_file_);
  if (!pair.ok()) return pair.status();
  absl::MutexLock lock(&tls->mu_);
  tls->pair_ = *std::move(pair);
  tls->stamp_ = Stamp(tls->cert_file_) + Stamp(tls->key_file_);
  tls->checked_ = absl::Now();
  return tls;
}

std::shared_ptr<const HttpTls::KeyPair> HttpTls::Current() {
  absl::MutexLock lock(&mu_);
  const absl::Time now = absl::Now();
  if (now - checked_ < absl::Seconds(1)) return pair_;
  checked_ = now;
  const std::string stamp = Stamp(cert_file_) + Stamp(key_file_);
  if (stamp == stamp_) return pair_;
  stamp_ = stamp;  // a bad pair is reported once, not on every handshake
  absl::StatusOr<std::shared_ptr<const KeyPair>> pair = LoadPair(cert_file_, key_file_);
  if (!pair.ok()) {
    LogError("http_tls_reload_failed", {{"status", pair.status().ToString()},
                                        {"kept", "the previous certificate"}});
    return pair_;
  }
  pair_ = *std::move(pair);
  LogInfo("http_tls_reloaded", {{"cert", cert_file_}});
  return pair_;
}

int HttpTls::OnCertificate(SSL* ssl, void* self) {
  const std::shared_ptr<const KeyPair> pair = static_cast<HttpTls*>(self)->Current();
  return SSL_use_cert_and_key(ssl, pair->leaf, pair->key, pair->chain, 1) == 1 ? 1 : 0;
}

bool HttpTls::Configure(SSL_CTX& ctx) {
  SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION);
  SSL_CTX_set_cert_cb(&ctx, &HttpTls::OnCertificate, this);
  if (!client_ca_file_.empty()) {
    if (SSL_CTX_load_verify_locations(&ctx, client_ca_file_.c_str(), nullptr) != 1) {
      ERR_clear_error();
      return false;
    }
    SSL_CTX_set_verify(&ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  return true;
}

}  // namespace histd::server
