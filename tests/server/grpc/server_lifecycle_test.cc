// The daemon as a whole: bound address, health and reflection services, graceful shutdown
// (every received message applied and acknowledged, open streams released promptly).
#include <sched.h>

#include <grpcpp/generic/generic_stub.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "client/ingest_stream.h"
#include "model/histogram_types.h"
#include "tests/server/grpc/shutdown_expectations.h"
#include "tests/server/grpc/service_fixture.h"

namespace histd::server::testing {
namespace {

class ServerLifecycleTest : public ServiceTest {
 protected:
  using Stream = grpc::ClientReaderWriter<v1::IngestRequest, v1::IngestResponse>;
  // Creates a 2 x 2 histogram and opens a stream whose one message is acknowledged.
  std::unique_ptr<Stream> StreamWithOneAppliedMessage(const std::string& name,
                                                      grpc::ClientContext* ctx) {
    EXPECT_TRUE(Create(name, 2, 2).ok());
    std::unique_ptr<Stream> stream = ingest_->Ingest(ctx);
    v1::IngestResponse ack;
    EXPECT_TRUE(stream->Write(IndexMessage(1, name, {3})));
    EXPECT_TRUE(stream->Read(&ack));
    EXPECT_EQ(ack.code(), 0);
    return stream;
  }
};
HISTD_INSTANTIATE_ENGINES(ServerLifecycleTest);

std::string Flatten(const grpc::ByteBuffer& buffer) {
  std::vector<grpc::Slice> slices;
  std::string out;
  if (!buffer.Dump(&slices).ok()) return out;
  for (const auto& s : slices) out.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return out;
}

grpc::ByteBuffer Buffer(const std::string& bytes) {
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

// One unary call by method name with raw protobuf bytes (no generated stubs needed).
grpc::Status RawUnary(grpc::Channel* channel, const std::string& method,
                      const std::string& request, std::string* response) {
  grpc::GenericStub stub(channel->shared_from_this());
  grpc::CompletionQueue cq;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto call = stub.PrepareUnaryCall(&ctx, method, Buffer(request), &cq);
  call->StartCall();
  grpc::ByteBuffer reply;
  grpc::Status status;
  call->Finish(&reply, &status, reinterpret_cast<void*>(1));
  void* tag;
  bool ok;
  cq.Next(&tag, &ok);
  *response = Flatten(reply);
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  return status;
}

TEST_P(ServerLifecycleTest, BindsAnEphemeralPortAndRefusesABusyOne) {
  const std::string& address = server_->address();
  ASSERT_EQ(address.rfind("127.0.0.1:", 0), 0u) << address;
  EXPECT_NE(address, "127.0.0.1:0");
  Options o = DefaultOptions();
  o.address = address;  // taken by the running server
  absl::StatusOr<std::unique_ptr<HistdServer>> second = HistdServer::Start(o);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable) << second.status();
  EXPECT_TRUE(Create("still", 1, 1).ok());
}

TEST_P(ServerLifecycleTest, BadOptionsAreRefused) {
  Options o = DefaultOptions();
  o.pipeline.staging_buffers = 0;
  EXPECT_EQ(HistdServer::Start(o).status().code(), absl::StatusCode::kInvalidArgument);
  o = DefaultOptions();
  o.limits.max_message_bytes = 10;
  EXPECT_EQ(HistdServer::Start(o).status().code(), absl::StatusCode::kInvalidArgument);
  o = DefaultOptions();
  o.pipeline.eager_flush_depth = -1;
  EXPECT_EQ(HistdServer::Start(o).status().code(), absl::StatusCode::kInvalidArgument);
  o = DefaultOptions();
  o.pipeline.acknowledger_threads = -1;
  EXPECT_EQ(HistdServer::Start(o).status().code(), absl::StatusCode::kInvalidArgument);
  o = DefaultOptions();
  o.pipeline.stream_read_ahead_bytes = 0;
  EXPECT_EQ(HistdServer::Start(o).status().code(), absl::StatusCode::kInvalidArgument);
  o = DefaultOptions();
  o.limits.max_bins_per_histogram = 0;
  EXPECT_EQ(HistdServer::Start(o).status().code(), absl::StatusCode::kInvalidArgument);
  // Larger than any engine can create (kMaxHistogramBins): refused at start-up, with the cap.
  o = DefaultOptions();
  o.limits.max_bins_per_histogram = kMaxHistogramBins + 1;
  const absl::Status too_large = HistdServer::Start(o).status();
  EXPECT_EQ(too_large.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(too_large.message().find("2147483648"), std::string::npos) << too_large;
  o = DefaultOptions();
  o.limits.max_bins_per_histogram = kMaxHistogramBins;  // the cap itself is allowed
  EXPECT_TRUE(HistdServer::Start(o).ok());
}

// The CPU engine's default worker count follows the daemon's affinity mask (taskset, cpusets,
// container CPU pinning), not the host's CPU count.
TEST_P(ServerLifecycleTest, CpuEngineWorkersDefaultToTheCpusTheDaemonMayUse) {
  if (GetParam() != "cpu") GTEST_SKIP() << "the CPU engine's worker count";
  Options o = DefaultOptions();
  o.engine.kind = EngineKind::kCpu;
  o.engine.cpu_threads = 0;
  std::string name;
  // Started from a thread pinned to one CPU: every thread the daemon starts inherits the mask.
  std::thread pinned([&] {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    if (sched_setaffinity(0, sizeof(one), &one) != 0) return;
    absl::StatusOr<std::unique_ptr<HistdServer>> server = HistdServer::Start(o);
    if (server.ok()) name = (*server)->engine_name();
  });
  pinned.join();
  EXPECT_EQ(name, "cpu (1 threads)");
}

// The ingest stream decodes requests itself (ingest_request_decoder.h): bytes that are no
// IngestRequest get their own INVALID_ARGUMENT acknowledgement, and the stream goes on.
TEST_P(ServerLifecycleTest, MalformedIngestBytesAreRejectedAndTheStreamGoesOn) {
  ASSERT_TRUE(Create("raw", 4, 4).ok());
  grpc::GenericStub stub(channel_);
  grpc::CompletionQueue cq;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  auto call = stub.PrepareCall(&ctx, "/histd.v1.Ingest/Ingest", &cq);
  void* tag;
  bool ok;
  call->StartCall(reinterpret_cast<void*>(1));
  ASSERT_TRUE(cq.Next(&tag, &ok) && ok);
  std::string truncated = IndexMessage(2, "raw", {1, 2, 3}).SerializeAsString();
  truncated.resize(truncated.size() - 1);  // the samples field claims one byte more
  const std::string messages[] = {IndexMessage(1, "raw", {0, 5, 5}).SerializeAsString(),
                                  truncated, std::string("\x0b", 1),  // a group: unsupported
                                  IndexMessage(4, "raw", {15}).SerializeAsString()};
  for (const std::string& m : messages) {
    call->Write(Buffer(m), reinterpret_cast<void*>(2));
    ASSERT_TRUE(cq.Next(&tag, &ok) && ok);
  }
  std::vector<v1::IngestResponse> acks;
  for (size_t i = 0; i < std::size(messages); ++i) {
    grpc::ByteBuffer reply;
    call->Read(&reply, reinterpret_cast<void*>(3));
    ASSERT_TRUE(cq.Next(&tag, &ok) && ok);
    v1::IngestResponse ack;
    ASSERT_TRUE(ack.ParseFromString(Flatten(reply)));
    acks.push_back(ack);
  }
  EXPECT_EQ(acks[0].code(), 0);
  EXPECT_EQ(acks[0].sequence(), 1u);
  for (int i : {1, 2}) {
    EXPECT_EQ(acks[i].code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(acks[i].message().find("malformed histd.v1.IngestRequest"), std::string::npos)
        << acks[i].message();
  }
  EXPECT_EQ(acks[3].code(), 0);
  EXPECT_EQ(acks[3].sequence(), 4u);
  call->WritesDone(reinterpret_cast<void*>(4));
  ASSERT_TRUE(cq.Next(&tag, &ok));
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(5));
  ASSERT_TRUE(cq.Next(&tag, &ok));
  EXPECT_TRUE(status.ok()) << status.error_message();
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  EXPECT_EQ(Info("raw").total_count(), 4u);  // messages 1 and 4 only
}

TEST_P(ServerLifecycleTest, HealthReportsServing) {
  std::string reply;
  // HealthCheckRequest{service: ""} is the empty message; SERVING is field 1 = 1.
  grpc::Status s = RawUnary(channel_.get(), "/grpc.health.v1.Health/Check", "", &reply);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(reply, std::string("\x08\x01", 2));
}

TEST_P(ServerLifecycleTest, ReflectionListsTheServices) {
  grpc::GenericStub stub(channel_);
  grpc::CompletionQueue cq;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto call = stub.PrepareCall(&ctx, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
                               &cq);
  void* tag;
  bool ok;
  call->StartCall(reinterpret_cast<void*>(1));
  ASSERT_TRUE(cq.Next(&tag, &ok) && ok);
  // ServerReflectionRequest{list_services: ""}: field 7, length-delimited, empty.
  call->Write(Buffer(std::string("\x3a\x00", 2)), reinterpret_cast<void*>(2));
  ASSERT_TRUE(cq.Next(&tag, &ok) && ok);
  grpc::ByteBuffer reply;
  call->Read(&reply, reinterpret_cast<void*>(3));
  ASSERT_TRUE(cq.Next(&tag, &ok) && ok);
  const std::string bytes = Flatten(reply);
  for (const char* service : {"histd.v1.Histograms", "histd.v1.Ingest", "histd.v1.Query",
                              "histd.v1.Compute", "grpc.health.v1.Health"}) {
    EXPECT_NE(bytes.find(service), std::string::npos) << service;
  }
  call->WritesDone(reinterpret_cast<void*>(4));
  cq.Next(&tag, &ok);
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(5));
  cq.Next(&tag, &ok);
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
}

TEST_P(ServerLifecycleTest, GracefulShutdownAppliesAndAcknowledgesEverythingReceived) {
  // A flush deadline far beyond the test: staged messages sit in the staging buffer until
  // shutdown drains them.
  Options o = DefaultOptions();
  o.pipeline.flush_deadline = absl::Hours(1);
  o.pipeline.eager_flush_depth = 0;
  StartServer(o);
  ASSERT_TRUE(Create("drain", 10, 10).ok());
  grpc::ClientContext ctx;
  auto stream = ingest_->Ingest(&ctx);
  constexpr int kMessages = 40;
  for (int i = 0; i < kMessages; ++i) {
    ASSERT_TRUE(stream->Write(IndexMessage(i + 1, "drain", std::vector<uint32_t>(i + 1, i % 100))));
  }
  // Wait until the server has received and staged them all (nothing is acknowledged yet).
  // Shutdown only promises to apply what was received, so the test must not race the reads.
  ASSERT_TRUE(WaitUntil([&] {
    v1::ServerStats stats;
    grpc::ClientContext c;
    return histograms_->GetServerStats(&c, {}, &stats).ok() &&
           stats.unacknowledged_messages() == uint64_t{kMessages};
  }, absl::Seconds(60)));
  v1::ServerStats before;
  {
    grpc::ClientContext c;
    ASSERT_TRUE(histograms_->GetServerStats(&c, {}, &before).ok());
  }
  EXPECT_EQ(before.messages(), 0u);  // still staged, not applied

  const absl::Time start = absl::Now();
  std::thread stopper([&] { server_->Shutdown(absl::Seconds(30)); });
  // Every message received before the shutdown is applied and acknowledged, then the notice.
  std::vector<v1::IngestResponse> acks;
  v1::IngestResponse ack;
  while (acks.size() < size_t{kMessages} && stream->Read(&ack)) acks.push_back(ack);
  ASSERT_EQ(acks.size(), size_t{kMessages});
  for (int i = 0; i < kMessages; ++i) {
    EXPECT_FALSE(acks[i].server_shutting_down());
    EXPECT_EQ(acks[i].sequence(), uint64_t(i + 1));
    EXPECT_EQ(acks[i].code(), 0) << acks[i].message();
    EXPECT_EQ(acks[i].samples(), uint64_t(i + 1));
  }
  ASSERT_TRUE(stream->Read(&ack));
  EXPECT_TRUE(ack.server_shutting_down());
  EXPECT_EQ(ack.sequence(), 0u);
  EXPECT_EQ(ack.code(), grpc::StatusCode::UNAVAILABLE);
  // A message that crosses the notice is acknowledged UNAVAILABLE and not applied.
  ASSERT_TRUE(stream->Write(IndexMessage(kMessages + 1, "drain", {7})));
  ASSERT_TRUE(stream->Read(&ack));
  EXPECT_EQ(ack.sequence(), uint64_t{kMessages + 1});
  EXPECT_EQ(ack.code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(ack.samples(), 0u);
  // The half-close ends the stream.
  stream->WritesDone();
  EXPECT_FALSE(stream->Read(&ack));
  const grpc::Status status = stream->Finish();
  stopper.join();
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));  // not the grace, not the flush deadline
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
  uint64_t expected_samples = 0;
  for (int i = 0; i < kMessages; ++i) expected_samples += i + 1;
  EXPECT_EQ(server_->ingest_stats().messages, uint64_t{kMessages});
  EXPECT_EQ(server_->ingest_stats().samples, expected_samples);
  // The server is gone: new calls fail UNAVAILABLE.
  grpc::ClientContext c;
  v1::HistogramInfo info;
  v1::GetHistogramInfoRequest req;
  req.set_name("drain");
  c.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  EXPECT_EQ(histograms_->GetHistogramInfo(&c, req, &info).error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

TEST_P(ServerLifecycleTest, IdleStreamThatHalfClosesOnTheNoticeEndsWithoutWaitingForTheGrace) {
  grpc::ClientContext ctx;
  auto stream = StreamWithOneAppliedMessage("idle", &ctx);
  ASSERT_FALSE(HasFailure());
  v1::IngestResponse ack;
  const absl::Time start = absl::Now();
  std::thread stopper([&] { server_->Shutdown(absl::Seconds(60)); });
  ASSERT_TRUE(stream->Read(&ack));
  EXPECT_TRUE(ack.server_shutting_down());
  stream->WritesDone();
  EXPECT_FALSE(stream->Read(&ack));
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
  stopper.join();
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
  EXPECT_TRUE(server_->Wait().ok());    // returns: shutdown completed
  server_->Shutdown(absl::Seconds(1));  // idempotent
}

TEST_P(ServerLifecycleTest, StreamThatIgnoresTheNoticeIsCutOffAtTheGrace) {
  grpc::ClientContext ctx;
  auto stream = StreamWithOneAppliedMessage("deaf", &ctx);
  ASSERT_FALSE(HasFailure());
  v1::IngestResponse ack;
  const absl::Time start = absl::Now();
  server_->Shutdown(absl::Milliseconds(500));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(400));
  EXPECT_LT(absl::Now() - start, absl::Seconds(20));
  while (stream->Read(&ack)) EXPECT_TRUE(ack.server_shutting_down());  // the notice, if any
  EXPECT_NE(stream->Finish().error_code(), grpc::StatusCode::OK);
  EXPECT_EQ(server_->ingest_stats().messages, 1u);
}

// The client library honours the notice: producers that keep sending while the server shuts
// down learn the fate of every message they wrote, and the acknowledged samples are exactly
// the ones the server applied.
TEST_P(ServerLifecycleTest, ClientLibraryLearnsTheFateOfEveryMessageAcrossAShutdown) {
  Options o = DefaultOptions();
  o.pipeline.stage_inline_below_bytes = 0;  // every message through the stager threads
  StartServer(o);
  ASSERT_TRUE(Create("busy", 16, 16).ok());
  std::vector<client::IngestSummary> summaries(3);
  std::atomic<int> sending{0};
  std::vector<std::thread> producers;
  for (size_t p = 0; p < summaries.size(); ++p) {
    producers.emplace_back([&, p] {
      client::IngestStreamOptions options;
      options.max_message_bytes = 64;  // 16 samples per message: many messages in flight
      options.max_in_flight_messages = 8;
      client::IngestStream stream(ingest_.get(), options);
      std::vector<uint32_t> samples(16);
      for (size_t i = 0; i < samples.size(); ++i) samples[i] = (p * 31 + i) % 256;
      sending.fetch_add(1);
      while (stream.SendIndices("busy", samples).ok()) {
      }
      summaries[p] = stream.Finish();
    });
  }
  while (sending.load() < 3) absl::SleepFor(absl::Milliseconds(1));
  absl::SleepFor(absl::Milliseconds(100));
  server_->Shutdown(absl::Seconds(30));
  for (auto& t : producers) t.join();
  uint64_t acked_samples = 0, acked_messages = 0;
  for (const auto& s : summaries) {
    histd::testing::ExpectEveryMessageSettledByShutdown(s);
    EXPECT_GT(s.counters.messages_acked, 0u);
    acked_samples += s.counters.samples_acked;
    acked_messages += s.counters.messages_acked;
  }
  EXPECT_EQ(server_->ingest_stats().samples, acked_samples);
  EXPECT_EQ(server_->ingest_stats().messages, acked_messages);
}

}  // namespace
}  // namespace histd::server::testing
