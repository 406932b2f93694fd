// TLS on the gRPC port, with certificates made by the openssl command line: plaintext and
// wrongly trusting clients are refused, mutual TLS requires and maps client certificates,
// and certificates replaced on disk serve new connections without a restart.
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "client/client_security.h"
#include "client/histd_client.h"
#include "gtest/gtest.h"
#include "server/core/access_control.h"
#include "server/core/options.h"
#include "server/grpc/server.h"
#include "tests/server/grpc/test_pki.h"

namespace histd::server {
namespace {

using testing::TestPki;

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pki_.MakeCa("ca");
    pki_.MakeCa("other-ca");
    pki_.MakeCert("server", "ca", "localhost", /*server=*/true);
    pki_.MakeCert("reader-client", "ca", "histd reader 1", /*server=*/false);
    pki_.MakeCert("admin-client", "ca", "ops-admin", /*server=*/false);
    pki_.MakeCert("stranger", "other-ca", "ops-admin", /*server=*/false);
  }

  Options TlsOptions() {
    Options o;
    o.address = "127.0.0.1:0";
    o.engine.kind = EngineKind::kCpu;
    o.engine.cpu_threads = 2;
    o.rpc_workers = 2;
    o.pipeline.staging_buffers = 2;
    o.pipeline.staging_buffer_bytes = 1 << 20;
    o.security.tls_cert_file = pki_.Path("server.pem");
    o.security.tls_key_file = pki_.Path("server.key");
    o.security.tls_reload_interval = absl::Seconds(1);
    return o;
  }

  void Start(const Options& o) {
    absl::StatusOr<std::unique_ptr<HistdServer>> server = HistdServer::Start(o);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  // A client trusting `ca` (empty: plaintext), with `cert` as its client certificate.
  absl::Status List(const std::string& ca, const std::string& cert = "",
                    const std::string& token = "") {
    client::ClientOptions options;
    options.rpc_timeout = absl::Seconds(10);
    if (!ca.empty()) {
      options.security.tls = true;
      options.security.ca_pem = pki_.Read(ca + ".pem");
    }
    if (!cert.empty()) {
      options.security.cert_pem = pki_.Read(cert + ".pem");
      options.security.key_pem = pki_.Read(cert + ".key");
    }
    options.security.token = token;
    return client::Client(server_->address(), options).ListHistograms().status();
  }

  TestPki pki_;
  std::unique_ptr<HistdServer> server_;
};

TEST_F(TlsTest, RefusesPlaintextAndWrongCaServesTheRightOne) {
  Start(TlsOptions());
  const absl::Status plaintext = List("");
  EXPECT_EQ(plaintext.code(), absl::StatusCode::kUnavailable) << plaintext;
  EXPECT_STREQ(client::FailureKind(plaintext), "connection") << plaintext;
  const absl::Status wrong_ca = List("other-ca");
  EXPECT_EQ(wrong_ca.code(), absl::StatusCode::kUnavailable) << wrong_ca;
  EXPECT_STREQ(client::FailureKind(wrong_ca), "certificate") << wrong_ca;
  EXPECT_TRUE(List("ca").ok()) << List("ca");
}

TEST_F(TlsTest, MutualTlsRequiresAClientCertificateItsCaSigned) {
  Options o = TlsOptions();
  o.security.tls_client_ca_file = pki_.Path("ca.pem");
  Start(o);
  const absl::Status anonymous = List("ca");
  EXPECT_EQ(anonymous.code(), absl::StatusCode::kUnavailable) << anonymous;
  const absl::Status stranger = List("ca", "stranger");
  EXPECT_EQ(stranger.code(), absl::StatusCode::kUnavailable) << stranger;
  EXPECT_TRUE(List("ca", "reader-client").ok()) << List("ca", "reader-client");
}

TEST_F(TlsTest, ClientCertificateSubjectsMapToRoles) {
  Options o = TlsOptions();
  o.security.tls_client_ca_file = pki_.Path("ca.pem");
  pki_.Write("tokens", absl::StrCat("subject:histd reader 1 monitor reader\n",
                                    "subject:ops-admin ops admin\n", "sha256:",
                                    TokenDigestHex("tok"), " script reader\n"));
  o.security.auth_tokens_file = pki_.Path("tokens");
  Start(o);
  client::ClientOptions options;
  options.rpc_timeout = absl::Seconds(10);
  options.security.tls = true;
  options.security.ca_pem = pki_.Read("ca.pem");
  options.security.cert_pem = pki_.Read("reader-client.pem");
  options.security.key_pem = pki_.Read("reader-client.key");
  client::Client reader(server_->address(), options);
  EXPECT_TRUE(reader.ListHistograms().ok());
  histd::v1::DeleteHistogramRequest del;
  del.set_name("x");
  const absl::Status denied = reader.DeleteHistogram(del).status();
  EXPECT_EQ(denied.code(), absl::StatusCode::kPermissionDenied) << denied;
  EXPECT_TRUE(absl::StrContains(denied.message(), "monitor")) << denied;
  options.security.cert_pem = pki_.Read("admin-client.pem");
  options.security.key_pem = pki_.Read("admin-client.key");
  client::Client admin(server_->address(), options);
  EXPECT_EQ(admin.DeleteHistogram(del).status().code(), absl::StatusCode::kNotFound);
  // A token wins over the certificate: this one is only a reader.
  options.security.token = "tok";
  client::Client admin_with_token(server_->address(), options);
  EXPECT_EQ(admin_with_token.DeleteHistogram(del).status().code(),
            absl::StatusCode::kPermissionDenied);
}

TEST_F(TlsTest, RotatedCertificatesServeNewConnections) {
  Start(TlsOptions());
  ASSERT_TRUE(List("ca").ok());
  // The certificate and key are replaced by ones from another CA (as a renewal by a new
  // issuer would): new connections must see the new certificate, without a restart.
  pki_.MakeCert("rotated", "other-ca", "localhost", /*server=*/true);
  pki_.Write("server.key", pki_.Read("rotated.key"));
  pki_.Write("server.pem", pki_.Read("rotated.pem"));
  const absl::Time deadline = absl::Now() + absl::Seconds(15);
  while (absl::Now() < deadline && !List("other-ca").ok()) absl::SleepFor(absl::Milliseconds(250));
  EXPECT_TRUE(List("other-ca").ok()) << List("other-ca");
  EXPECT_EQ(List("ca").code(), absl::StatusCode::kUnavailable);
}

TEST_F(TlsTest, BadCertificateFilesStopTheStart) {
  Options o = TlsOptions();
  o.security.tls_key_file = pki_.Path("reader-client.key");  // another certificate's key
  absl::StatusOr<std::unique_ptr<HistdServer>> mismatched = HistdServer::Start(o);
  EXPECT_EQ(mismatched.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(mismatched.status().message(), "does not belong"))
      << mismatched.status();
  o = TlsOptions();
  o.security.tls_cert_file = pki_.Path("missing.pem");
  EXPECT_EQ(HistdServer::Start(o).status().code(), absl::StatusCode::kFailedPrecondition);
  o = TlsOptions();
  o.security.tls_key_file.clear();
  EXPECT_EQ(HistdServer::Start(o).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace histd::server
