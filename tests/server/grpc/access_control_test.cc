// Access control: the tokens file's format, the method table against the proto
// descriptors, every RPC of every service for every role through a real daemon, token
// revocation by editing the file, protected mode, the health-only port and --reflection.
#include "server/core/access_control.h"

#include <unistd.h>

#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <google/protobuf/descriptor.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/histd_client.h"
#include "gtest/gtest.h"
#include "histd/v1/compute.pb.h"
#include "histd/v1/histograms.pb.h"
#include "histd/v1/ingest.grpc.pb.h"
#include "histd/v1/query.pb.h"
#include "server/core/options.h"
#include "server/grpc/server.h"
#include "server/grpc/transport_security.h"
#include "tests/server/grpc/test_pki.h"

namespace histd::server {
namespace {

namespace v1 = ::histd::v1;
using testing::TestPki;

TEST(IdentityTableTest, ParsesTokensSubjectsAndComments) {
  const std::string digest = TokenDigestHex("s3cret");
  absl::StatusOr<IdentityTable> t = ParseIdentityTable(absl::StrCat(
      "# histd identities\n\n  sha256:", digest, " alice admin  # the operator\n",
      "subject:histd producer 7 ingest-7 producer\n"));
  ASSERT_TRUE(t.ok()) << t.status();
  ASSERT_EQ(t->tokens.size(), 1u);
  EXPECT_EQ(t->tokens[0].identity.name, "alice");
  EXPECT_EQ(t->tokens[0].identity.role, Role::kAdmin);
  ASSERT_EQ(t->subjects.size(), 1u);
  EXPECT_EQ(t->subjects[0].subject, "histd producer 7");  // a CN with spaces
  EXPECT_EQ(t->subjects[0].identity.role, Role::kProducer);
  // sha256sum of "s3cret", as the docs tell an operator to compute it.
  EXPECT_EQ(digest, "1ec1c26b50d5d3c58d9583181af8076655fe00756bf7285940ba3670f99fcba0");
}

TEST(IdentityTableTest, RefusesBadLinesNamingThem) {
  for (const char* bad : {"sha256:abcd alice admin",      // short digest
                          "sha256:zz alice admin",        // not hex
                          "token:abc alice admin",        // unknown kind
                          "subject:cn alice root",        // unknown role
                          "subject:cn alice"}) {          // too few fields
    absl::StatusOr<IdentityTable> t = ParseIdentityTable(absl::StrCat("# ok\n", bad, "\n"));
    EXPECT_EQ(t.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_TRUE(absl::StrContains(t.status().message(), "line 2")) << t.status();
  }
}

// Every method of every histd.v1 service has a role, and the table names no other method.
TEST(MethodTableTest, CoversEveryMethodOfEveryService) {
  const google::protobuf::DescriptorPool* pool = google::protobuf::DescriptorPool::generated_pool();
  std::set<std::string> from_protos;
  for (const char* file : {"histd/v1/histograms.proto", "histd/v1/ingest.proto",
                           "histd/v1/query.proto", "histd/v1/compute.proto"}) {
    const google::protobuf::FileDescriptor* f = pool->FindFileByName(file);
    ASSERT_NE(f, nullptr) << file;
    for (int s = 0; s < f->service_count(); ++s) {
      for (int m = 0; m < f->service(s)->method_count(); ++m) {
        from_protos.insert(
            absl::StrCat("/", f->service(s)->full_name(), "/", f->service(s)->method(m)->name()));
      }
    }
  }
  const std::vector<std::string> known = KnownMethods();
  EXPECT_EQ(std::set<std::string>(known.begin(), known.end()), from_protos);
  EXPECT_EQ(known.size(), from_protos.size());  // no duplicates
  EXPECT_FALSE(RequiredRole("/histd.v1.Histograms/NoSuchMethod").has_value());
}

std::string WriteTokens(const TestPki& pki, const std::string& text) {
  pki.Write("tokens", text);
  return pki.Path("tokens");
}

std::string TokensFile() {
  return absl::StrCat("sha256:", TokenDigestHex("tok-reader"), " rita reader\n",
                      "sha256:", TokenDigestHex("tok-producer"), " pete producer\n",
                      "sha256:", TokenDigestHex("tok-admin"), " ada admin\n");
}

Options SecuredOptions(const TestPki& pki) {
  Options o;
  o.address = "127.0.0.1:0";
  o.engine.kind = EngineKind::kCpu;
  o.engine.cpu_threads = 2;
  o.rpc_workers = 2;
  o.pipeline.staging_buffers = 2;
  o.pipeline.staging_buffer_bytes = 1 << 20;
  o.snapshot.path = pki.Path("histd.snapshot");
  o.security.auth_tokens_file = pki.Path("tokens");
  o.security.auth_reload_interval = absl::Milliseconds(200);
  return o;
}

client::Client Connect(const std::string& address, const std::string& token) {
  client::ClientOptions options;
  options.security.token = token;
  options.rpc_timeout = absl::Seconds(20);
  return client::Client(address, options);
}

v1::CreateHistogramRequest CreateRequest(const std::string& name) {
  v1::CreateHistogramRequest r;
  r.mutable_spec()->set_name(name);
  r.mutable_spec()->set_rows(4);
  r.mutable_spec()->set_cols(8);
  return r;
}

// One sample into bin 3 of `name` on a raw ingest stream; the stream's final status (an
// access refusal ends the stream before any message is read).
absl::Status IngestOne(const std::string& address, const std::string& token,
                       const std::string& name) {
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  auto stub = v1::Ingest::NewStub(channel);
  grpc::ClientContext context;
  if (!token.empty()) context.AddMetadata("authorization", "Bearer " + token);
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
  auto stream = stub->Ingest(&context);
  v1::IngestRequest request;
  request.set_sequence(1);
  request.set_histogram(name);
  request.set_type(v1::SAMPLE_TYPE_BIN_INDEX_U32);
  const uint32_t index = 3;
  request.set_samples(std::string(reinterpret_cast<const char*>(&index), 4));
  stream->Write(request);
  stream->WritesDone();
  v1::IngestResponse response;
  absl::Status first = absl::OkStatus();
  bool acknowledged = false;
  while (stream->Read(&response)) {
    if (!acknowledged && response.code() != 0) first = absl::UnknownError(response.message());
    acknowledged = true;
  }
  grpc::Status status = stream->Finish();
  if (!status.ok()) return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                                        status.error_message());
  return acknowledged ? first : absl::DataLossError("no acknowledgement");
}

struct Rpc {
  std::string method;
  Role required;
  std::function<absl::Status(client::Client&, const std::string& address, const std::string& token)> call;
};

std::vector<Rpc> EveryRpc() {
  const auto hist = [](v1::ArrayInput* in) { in->set_histogram("t"); };
  return {
      {"/histd.v1.Histograms/ListHistograms", Role::kReader,
       [](client::Client& c, auto&, auto&) { return c.ListHistograms().status(); }},
      {"/histd.v1.Histograms/GetHistogramInfo", Role::kReader,
       [](client::Client& c, auto&, auto&) {
         v1::GetHistogramInfoRequest r;
         r.set_name("t");
         return c.GetHistogramInfo(r).status();
       }},
      {"/histd.v1.Histograms/GetServerStats", Role::kReader,
       [](client::Client& c, auto&, auto&) { return c.GetServerStats().status(); }},
      {"/histd.v1.Histograms/CreateHistogram", Role::kProducer,
       [](client::Client& c, auto&, auto&) { return c.CreateHistogram(CreateRequest("new")).status(); }},
      {"/histd.v1.Histograms/DeleteHistogram", Role::kAdmin,
       [](client::Client& c, auto&, auto&) {
         v1::DeleteHistogramRequest r;
         r.set_name("t");
         return c.DeleteHistogram(r).status();
       }},
      {"/histd.v1.Histograms/ResetHistogram", Role::kAdmin,
       [](client::Client& c, auto&, auto&) {
         v1::ResetHistogramRequest r;
         r.set_name("t");
         return c.ResetHistogram(r).status();
       }},
      {"/histd.v1.Histograms/MergeHistogram", Role::kAdmin,
       [](client::Client& c, auto&, auto&) {
         v1::MergeHistogramRequest r;
         r.set_source("t");
         r.set_target("u");
         return c.MergeHistogram(r).status();
       }},
      {"/histd.v1.Histograms/WriteSnapshot", Role::kAdmin,
       [](client::Client& c, auto&, auto&) { return c.WriteSnapshot().status(); }},
      {"/histd.v1.Histograms/ReadAndResetHistogram", Role::kAdmin,
       [](client::Client& c, auto&, auto&) {
         v1::ReadAndResetHistogramRequest r;
         r.set_name("t");
         return c.ReadAndResetHistogram(r).status();
       }},
      {"/histd.v1.Ingest/Ingest", Role::kProducer,
       [](client::Client&, const std::string& address, const std::string& token) {
         return IngestOne(address, token, "t");
       }},
      {"/histd.v1.Query/Query", Role::kReader,
       [](client::Client& c, auto&, auto&) {
         v1::QueryRequest r;
         r.set_name("t");
         return c.Query(r).status();
       }},
      {"/histd.v1.Query/Project", Role::kReader,
       [](client::Client& c, auto&, auto&) {
         v1::ProjectRequest r;
         r.set_name("t");
         r.set_collapse(v1::DIM_ROWS);
         return c.Project(r).status();
       }},
      {"/histd.v1.Query/Cdf", Role::kReader,
       [](client::Client& c, auto&, auto&) {
         v1::CdfRequest r;
         r.set_name("t");
         r.set_collapse(v1::DIM_ROWS);
         return c.Cdf(r).status();
       }},
      {"/histd.v1.Query/Quantiles", Role::kReader,
       [](client::Client& c, auto&, auto&) {
         v1::QuantilesRequest r;
         r.set_name("t");
         r.set_collapse(v1::DIM_ROWS);
         r.add_probabilities(0.5);
         return c.Quantiles(r).status();
       }},
      {"/histd.v1.Query/Render", Role::kReader,
       [](client::Client& c, auto&, auto&) {
         v1::RenderRequest r;
         r.set_name("t");
         return c.Render(r).status();
       }},
      {"/histd.v1.Query/Watch", Role::kReader,
       [](client::Client& c, auto&, auto&) {
         v1::WatchRequest r;
         r.set_name("t");
         std::unique_ptr<client::WatchStream> watch = c.Watch(r);
         v1::WatchUpdate first;
         if (watch->Next(&first)) {
           watch->Cancel();
           return absl::OkStatus();
         }
         return watch->Finish();
       }},
      {"/histd.v1.Compute/Reduce", Role::kReader,
       [hist](client::Client& c, auto&, auto&) {
         v1::ReduceRequest r;
         hist(r.mutable_input());
         r.set_op(v1::REDUCE_OP_SUM);
         r.set_collapse(v1::DIM_ROWS);
         return c.Reduce(r).status();
       }},
      {"/histd.v1.Compute/Scan", Role::kReader,
       [hist](client::Client& c, auto&, auto&) {
         v1::ScanRequest r;
         hist(r.mutable_input());
         r.set_kind(v1::SCAN_KIND_INCLUSIVE);
         r.set_along(v1::DIM_ROWS);
         return c.Scan(r).status();
       }},
      {"/histd.v1.Compute/Transpose", Role::kReader,
       [hist](client::Client& c, auto&, auto&) {
         v1::TransposeRequest r;
         hist(r.mutable_input());
         return c.Transpose(r).status();
       }},
      {"/histd.v1.Compute/Matmul", Role::kReader,
       [hist](client::Client& c, auto&, auto&) {
         v1::MatmulRequest r;
         hist(r.mutable_a());
         r.mutable_b()->set_histogram("tt");  // 8 x 4: t (4 x 8) times its transpose's shape
         return c.Matmul(r).status();
       }},
  };
}

class AccessControlServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteTokens(pki_, TokensFile());
    absl::StatusOr<std::unique_ptr<HistdServer>> server = HistdServer::Start(SecuredOptions(pki_));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  // t (4 x 8, one sample), tt (8 x 4) and u (4 x 8) exist; "new" does not.
  void ResetState() {
    client::Client admin = Connect(server_->address(), "tok-admin");
    for (const char* name : {"t", "tt", "u", "new"}) {
      v1::DeleteHistogramRequest d;
      d.set_name(name);
      (void)admin.DeleteHistogram(d);
    }
    ASSERT_TRUE(admin.CreateHistogram(CreateRequest("t")).ok());
    ASSERT_TRUE(admin.CreateHistogram(CreateRequest("u")).ok());
    v1::CreateHistogramRequest tt = CreateRequest("tt");
    tt.mutable_spec()->set_rows(8);
    tt.mutable_spec()->set_cols(4);
    ASSERT_TRUE(admin.CreateHistogram(tt).ok());
    ASSERT_TRUE(IngestOne(server_->address(), "tok-admin", "t").ok());
  }

  uint64_t TotalOfT() {
    client::Client admin = Connect(server_->address(), "tok-admin");
    v1::GetHistogramInfoRequest r;
    r.set_name("t");
    absl::StatusOr<v1::HistogramInfo> info = admin.GetHistogramInfo(r);
    return info.ok() ? info->total_count() : ~uint64_t{0};
  }

  TestPki pki_;
  std::unique_ptr<HistdServer> server_;
};

TEST_F(AccessControlServerTest, EveryRpcForEveryRole) {
  const std::vector<std::pair<std::string, Role>> roles = {
      {"tok-reader", Role::kReader}, {"tok-producer", Role::kProducer}, {"tok-admin", Role::kAdmin}};
  uint64_t denied = 0;
  for (const Rpc& rpc : EveryRpc()) {
    for (const auto& [token, role] : roles) {
      SCOPED_TRACE(absl::StrCat(rpc.method, " as ", RoleName(role)));
      ResetState();
      client::Client c = Connect(server_->address(), token);
      const absl::Status status = rpc.call(c, server_->address(), token);
      if (static_cast<int>(role) >= static_cast<int>(rpc.required)) {
        EXPECT_TRUE(status.ok()) << status;
      } else {
        ++denied;
        EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied) << status;
        EXPECT_TRUE(absl::StrContains(status.message(), rpc.method)) << status;
        EXPECT_TRUE(absl::StrContains(status.message(), RoleName(role))) << status;
        EXPECT_EQ(TotalOfT(), 1u) << "a refused call changed the histogram";
        v1::GetHistogramInfoRequest created;
        created.set_name("new");
        EXPECT_EQ(Connect(server_->address(), "tok-admin").GetHistogramInfo(created).status().code(),
                  absl::StatusCode::kNotFound);
      }
    }
    for (const std::string& token : {std::string(), std::string("tok-nobody")}) {
      SCOPED_TRACE(absl::StrCat(rpc.method, token.empty() ? " without a token" : " with an unknown token"));
      client::Client c = Connect(server_->address(), token);
      const absl::Status status = rpc.call(c, server_->address(), token);
      EXPECT_EQ(status.code(), absl::StatusCode::kUnauthenticated) << status;
    }
  }
  // 5 admin methods x (reader, producer) + 2 producer methods x reader.
  EXPECT_EQ(denied, 12u);
  absl::StatusOr<v1::ServerStats> stats = Connect(server_->address(), "tok-reader").GetServerStats();
  ASSERT_TRUE(stats.ok()) << stats.status();
  EXPECT_EQ(stats->auth_permission_denied(), denied);
  EXPECT_EQ(stats->auth_unauthenticated(), 2 * EveryRpc().size());
}

TEST_F(AccessControlServerTest, ARemovedTokenStopsWorkingWithinSeconds) {
  client::Client producer = Connect(server_->address(), "tok-producer");
  ASSERT_TRUE(producer.ListHistograms().ok());
  // The producer's line goes; the others stay.
  WriteTokens(pki_, absl::StrCat("sha256:", TokenDigestHex("tok-admin"), " ada admin\n"));
  const absl::Time deadline = absl::Now() + absl::Seconds(5);
  absl::Status status;
  while (absl::Now() < deadline) {
    status = producer.ListHistograms().status();
    if (!status.ok()) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_EQ(status.code(), absl::StatusCode::kUnauthenticated) << status;
  EXPECT_TRUE(Connect(server_->address(), "tok-admin").ListHistograms().ok());
  // A file that no longer parses keeps the last good identities.
  WriteTokens(pki_, "sha256:nonsense ada admin\n");
  absl::SleepFor(absl::Seconds(1));
  EXPECT_TRUE(Connect(server_->address(), "tok-admin").ListHistograms().ok());
}

TEST(ProtectedModeTest, RefusesAnOpenAddressWithoutCredentials) {
  TestPki pki;
  Options o = SecuredOptions(pki);
  o.snapshot.path.clear();
  o.security.auth_tokens_file.clear();
  o.address = "0.0.0.0:0";
  absl::StatusOr<std::unique_ptr<HistdServer>> refused = HistdServer::Start(o);
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition) << refused.status();
  for (const char* hint : {"--tls_cert", "--auth_tokens_file", "--allow_insecure"}) {
    EXPECT_TRUE(absl::StrContains(refused.status().message(), hint)) << refused.status();
  }
  o.security.allow_insecure = true;
  EXPECT_TRUE(HistdServer::Start(o).ok());
  o.security.allow_insecure = false;
  o.security.auth_tokens_file = WriteTokens(pki, TokensFile());
  EXPECT_TRUE(HistdServer::Start(o).ok());
  o.security.auth_tokens_file.clear();
  pki.MakeCa("ca");
  pki.MakeCert("server", "ca", "localhost", true);
  o.security.tls_cert_file = pki.Path("server.pem");
  o.security.tls_key_file = pki.Path("server.key");
  EXPECT_TRUE(HistdServer::Start(o).ok());
  // An open HTTP endpoint needs identities (it has no TLS): TLS alone is not enough.
  o.http.address = "0.0.0.0:0";
  absl::StatusOr<std::unique_ptr<HistdServer>> open_http = HistdServer::Start(o);
  ASSERT_EQ(open_http.status().code(), absl::StatusCode::kFailedPrecondition) << open_http.status();
  EXPECT_TRUE(absl::StrContains(open_http.status().message(), "--http_address"))
      << open_http.status();
  o.security.auth_tokens_file = WriteTokens(pki, TokensFile());
  EXPECT_TRUE(HistdServer::Start(o).ok());
  o.http.address = "127.0.0.1:0";
  o.security.auth_tokens_file.clear();
  EXPECT_TRUE(HistdServer::Start(o).ok());
  for (const char* loopback : {"127.0.0.1:0", "localhost:0", "[::1]:0"}) {
    EXPECT_TRUE(IsLoopbackAddress(loopback)) << loopback;
  }
  for (const char* open : {"0.0.0.0:0", "[::]:0", ":7440", "10.1.2.3:7440", "histd.example:7440"}) {
    EXPECT_FALSE(IsLoopbackAddress(open)) << open;
  }
}

// Status of one bidi call to the reflection service (an empty request).
grpc::StatusCode CallReflection(const std::string& address) {
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::CompletionQueue cq;
  auto call = stub.PrepareCall(&context, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", &cq);
  void* tag;
  bool ok;
  call->StartCall(reinterpret_cast<void*>(1));
  cq.Next(&tag, &ok);
  call->WritesDone(reinterpret_cast<void*>(2));
  cq.Next(&tag, &ok);
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(3));
  cq.Next(&tag, &ok);
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  return status.error_code();
}

TEST(HealthPortTest, ServesOnlyHealthInPlaintextBesideATlsPort) {
  TestPki pki;
  pki.MakeCa("ca");
  pki.MakeCert("server", "ca", "localhost", true);
  Options o = SecuredOptions(pki);
  o.snapshot.path.clear();
  o.security.auth_tokens_file = WriteTokens(pki, TokensFile());
  o.security.tls_cert_file = pki.Path("server.pem");
  o.security.tls_key_file = pki.Path("server.key");
  o.health_address = "127.0.0.1:0";
  absl::StatusOr<std::unique_ptr<HistdServer>> server = HistdServer::Start(o);
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_FALSE((*server)->health_address().empty());
  client::Client probe((*server)->health_address());  // plaintext, no token
  absl::StatusOr<client::ServingStatus> health = probe.CheckHealth();
  ASSERT_TRUE(health.ok()) << health.status();
  EXPECT_EQ(*health, client::ServingStatus::kServing);
  EXPECT_EQ(probe.ListHistograms().status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_EQ(CallReflection((*server)->health_address()), grpc::StatusCode::UNIMPLEMENTED);
  (*server)->Shutdown(absl::ZeroDuration());
}

TEST(ReflectionTest, OffWhenAsked) {
  TestPki pki;
  Options o = SecuredOptions(pki);
  o.snapshot.path.clear();
  o.security.auth_tokens_file.clear();
  absl::StatusOr<std::unique_ptr<HistdServer>> on = HistdServer::Start(o);
  ASSERT_TRUE(on.ok()) << on.status();
  EXPECT_EQ(CallReflection((*on)->address()), grpc::StatusCode::OK);
  o.reflection = false;
  absl::StatusOr<std::unique_ptr<HistdServer>> off = HistdServer::Start(o);
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_EQ(CallReflection((*off)->address()), grpc::StatusCode::UNIMPLEMENTED);
}

}  // namespace
}  // namespace histd::server
