// The client library against small fake histd.v1 services in this process (no histd
// server): IngestStream's numbering, batching, window, acknowledgement and error reporting;
// Query's chunk reassembly and its checks; status propagation of unary calls.
#include <grpcpp/grpcpp.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "client/histd_client.h"
#include "gtest/gtest.h"
#include "tests/server/grpc/shutdown_expectations.h"

namespace histd::client {
namespace {

// Acknowledges each request in order. A message for histogram "bad" is rejected with
// INVALID_ARGUMENT; the stream fails with RESOURCE_EXHAUSTED after fail_after messages
// (when set); acks wait while `hold` is set; wrong_sequence corrupts the third ack. With
// notice_after set, it sends the shutdown notice after that many acks, acknowledges later
// messages UNAVAILABLE and ends the stream UNAVAILABLE once the client half-closes.
class FakeIngest final : public v1::Ingest::Service {
 public:
  grpc::Status Ingest(grpc::ServerContext*,
                      grpc::ServerReaderWriter<v1::IngestResponse, v1::IngestRequest>* stream) override {
    v1::IngestRequest request;
    bool noticed = false;
    while (stream->Read(&request)) {
      if (noticed) {
        v1::IngestResponse response;
        response.set_sequence(request.sequence());
        response.set_code(static_cast<int>(grpc::StatusCode::UNAVAILABLE));
        if (!stream->Write(response)) break;
        continue;
      }
      {
        absl::MutexLock lock(&mu_);
        received_.push_back(request);
        mu_.Await(absl::Condition(+[](bool* hold) { return !*hold; }, &hold_));
        if (fail_after_ > 0 && received_.size() >= fail_after_) {
          return grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED, "fake server gives up");
        }
      }
      v1::IngestResponse response;
      response.set_sequence(request.sequence());
      if (wrong_sequence_ && request.sequence() == 3) response.set_sequence(99);
      response.set_samples(request.samples().size() / (request.type() == v1::SAMPLE_TYPE_XY_F32 ? 8 : 4));
      if (request.histogram() == "bad") {
        response.set_code(static_cast<int>(grpc::StatusCode::INVALID_ARGUMENT));
        response.set_message("index 7 at position 3 is out of range");
      }
      if (!stream->Write(response)) break;
      if (notice_after_ > 0 && request.sequence() == notice_after_) {
        v1::IngestResponse notice;
        notice.set_server_shutting_down(true);
        notice.set_code(static_cast<int>(grpc::StatusCode::UNAVAILABLE));
        if (!stream->Write(notice)) break;
        noticed = true;
      }
    }
    if (noticed) {
      half_closed_after_notice_ = true;  // Read returned false: the client half-closed
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "fake server shut down");
    }
    return grpc::Status::OK;
  }

  void SetNoticeAfter(uint64_t n) { notice_after_ = n; }
  bool HalfClosedAfterNotice() const { return half_closed_after_notice_; }

  void SetHold(bool hold) {
    absl::MutexLock lock(&mu_);
    hold_ = hold;
  }
  void SetFailAfter(size_t n) {
    absl::MutexLock lock(&mu_);
    fail_after_ = n;
  }
  void SetWrongSequence() { wrong_sequence_ = true; }
  std::vector<v1::IngestRequest> Received() {
    absl::MutexLock lock(&mu_);
    return received_;
  }
  size_t ReceivedCount() {
    absl::MutexLock lock(&mu_);
    return received_.size();
  }

 private:
  absl::Mutex mu_;
  std::vector<v1::IngestRequest> received_ ABSL_GUARDED_BY(mu_);
  bool hold_ ABSL_GUARDED_BY(mu_) = false;
  size_t fail_after_ ABSL_GUARDED_BY(mu_) = 0;
  std::atomic<bool> wrong_sequence_{false};
  std::atomic<uint64_t> notice_after_{0};
  std::atomic<bool> half_closed_after_notice_{false};
};

// Streams a fixed byte pattern as the query result in chunks, optionally corrupted.
class FakeQuery final : public v1::Query::Service {
 public:
  enum class Mode { kGood, kGap, kOverrun, kShort, kNotFound };
  Mode mode = Mode::kGood;
  uint64_t rows = 37, cols = 1001;  // 37037 bytes of u8: not a multiple of the chunk

  grpc::Status Query(grpc::ServerContext*, const v1::QueryRequest* request,
                     grpc::ServerWriter<v1::QueryChunk>* writer) override {
    if (mode == Mode::kNotFound) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, absl::StrCat("histogram '", request->name(), "' not found"));
    }
    const std::string data = Pattern(rows * cols);
    const size_t chunk = request->max_chunk_bytes() ? request->max_chunk_bytes() : 4096;
    uint64_t offset = 0;
    bool first = true;
    do {
      v1::QueryChunk c;
      if (first) {
        c.set_dtype(v1::DTYPE_U8);
        c.set_rows(rows);
        c.set_cols(cols);
        c.set_cap(200);
        c.set_total_bytes(data.size());
      }
      const size_t n = std::min<size_t>(chunk, data.size() - offset);
      c.set_offset(offset + (mode == Mode::kGap && !first ? 1 : 0));
      c.set_data(data.substr(offset, n + (mode == Mode::kOverrun && offset + n == data.size() ? 0 : 0)));
      if (mode == Mode::kOverrun && offset + n == data.size()) c.mutable_data()->append("xx");
      offset += n;
      first = false;
      writer->Write(c);
      if (mode == Mode::kShort && offset * 2 >= data.size()) break;
    } while (offset < data.size());
    return grpc::Status::OK;
  }

  static std::string Pattern(size_t n) {
    std::string s(n, '\0');
    for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + 7) % 251);
    return s;
  }
};

class FakeHistograms final : public v1::Histograms::Service {
  grpc::Status GetHistogramInfo(grpc::ServerContext*, const v1::GetHistogramInfoRequest* request,
                                v1::HistogramInfo* info) override {
    if (request->name() != "known") {
      return grpc::Status(grpc::StatusCode::NOT_FOUND, "histogram 'x' not found");
    }
    info->mutable_spec()->set_name("known");
    info->set_samples_applied(42);
    return grpc::Status::OK;
  }
};

class ClientFakeServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&ingest_);
    builder.RegisterService(&query_);
    builder.RegisterService(&histograms_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    client_ = std::make_unique<Client>(absl::StrCat("127.0.0.1:", port));
  }
  void TearDown() override {
    client_.reset();
    server_->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(2)));
  }

  FakeIngest ingest_;
  FakeQuery query_;
  FakeHistograms histograms_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<Client> client_;
};

TEST_F(ClientFakeServerTest, IngestNumbersBatchesAndAcknowledges) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 rng(seed);
  IngestStreamOptions options;
  options.max_message_bytes = 1000;  // 250 indices or 125 pairs
  std::atomic<uint64_t> callbacks{0};
  options.on_ack = [&](const IngestAck& ack) {
    EXPECT_EQ(ack.sequence, callbacks.fetch_add(1) + 1);
  };
  std::unique_ptr<IngestStream> stream = client_->OpenIngestStream(options);
  std::vector<uint32_t> a(10007), b(999);
  for (auto& v : a) v = static_cast<uint32_t>(rng());
  for (auto& v : b) v = static_cast<uint32_t>(rng());
  std::vector<float> xy(2 * 300);
  for (auto& v : xy) v = static_cast<float>(rng() % 1000) / 8;
  // Interleave histograms and types in uneven pieces.
  size_t ia = 0;
  while (ia < a.size()) {
    const size_t n = std::min<size_t>(a.size() - ia, 1 + rng() % 700);
    ASSERT_TRUE(stream->SendIndices("a", absl::MakeConstSpan(a).subspan(ia, n)).ok());
    ia += n;
    if (rng() % 3 == 0) ASSERT_TRUE(stream->SendXY("a", absl::MakeConstSpan(xy).subspan(0, 2 * (rng() % 300))).ok());
  }
  ASSERT_TRUE(stream->SendIndices("b", b).ok());
  ASSERT_TRUE(stream->WaitForAcks().ok());
  const IngestCounters mid = stream->counters();
  EXPECT_EQ(mid.messages_in_flight(), 0u);
  EXPECT_EQ(mid.messages_acked, mid.messages_sent);
  IngestSummary summary = stream->Finish();
  ASSERT_TRUE(summary.stream_status.ok()) << summary.stream_status;
  EXPECT_TRUE(summary.OverallStatus().ok());
  EXPECT_EQ(summary.unacknowledged, 0u);
  EXPECT_EQ(summary.counters.messages_rejected, 0u);
  EXPECT_EQ(callbacks.load(), summary.counters.messages_sent);

  // Sequences 1..n in order, payloads within the limit, contents reassemble exactly.
  const std::vector<v1::IngestRequest> got = ingest_.Received();
  ASSERT_EQ(got.size(), summary.counters.messages_sent);
  std::string got_a, got_b;
  uint64_t samples = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].sequence(), i + 1);
    EXPECT_LE(got[i].samples().size(), 1000u);
    EXPECT_GT(got[i].samples().size(), 0u);
    if (got[i].type() == v1::SAMPLE_TYPE_BIN_INDEX_U32) {
      EXPECT_EQ(got[i].samples().size() % 4, 0u);
      samples += got[i].samples().size() / 4;
      (got[i].histogram() == "a" ? got_a : got_b) += got[i].samples();
    } else {
      EXPECT_EQ(got[i].samples().size() % 8, 0u);
      samples += got[i].samples().size() / 8;
    }
  }
  EXPECT_EQ(got_a, std::string(reinterpret_cast<const char*>(a.data()), 4 * a.size()));
  EXPECT_EQ(got_b, std::string(reinterpret_cast<const char*>(b.data()), 4 * b.size()));
  EXPECT_EQ(samples, summary.counters.samples_sent);
  EXPECT_EQ(summary.counters.samples_acked, summary.counters.samples_sent);
}

TEST_F(ClientFakeServerTest, IngestHalfClosesOnTheShutdownNoticeAndReadsEveryAck) {
  ingest_.SetNoticeAfter(5);
  IngestStreamOptions options;
  options.max_message_bytes = 16;  // 4 indices per message
  options.max_in_flight_messages = 3;
  std::unique_ptr<IngestStream> stream = client_->OpenIngestStream(options);
  const std::vector<uint32_t> four = {1, 2, 3, 4};
  absl::Status sent;
  int sends = 0;
  // The producer keeps sending until the stream refuses; the window keeps it from running
  // ahead of the notice by more than max_in_flight_messages.
  while ((sent = stream->SendIndices("h", four)).ok()) ASSERT_LT(++sends, 10000);
  EXPECT_EQ(sent.code(), absl::StatusCode::kUnavailable) << sent;
  IngestSummary summary = stream->Finish();
  histd::testing::ExpectEveryMessageSettledByShutdown(summary);
  EXPECT_EQ(summary.counters.messages_acked, 5u);
  for (const IngestAck& r : summary.rejected) EXPECT_GT(r.sequence, 5u);
  EXPECT_TRUE(ingest_.HalfClosedAfterNotice());
}

TEST_F(ClientFakeServerTest, IngestReportsRejectedMessagesAndKeepsGoing) {
  IngestStreamOptions options;
  options.max_message_bytes = 40;  // 10 indices
  std::unique_ptr<IngestStream> stream = client_->OpenIngestStream(options);
  std::vector<uint32_t> idx(25, 1);
  ASSERT_TRUE(stream->SendIndices("good", idx).ok());   // 2 full messages, 5 pending
  ASSERT_TRUE(stream->SendIndices("bad", idx).ok());    // 2 full, 5 pending
  ASSERT_TRUE(stream->SendIndices("good", idx).ok());
  IngestSummary summary = stream->Finish();
  EXPECT_TRUE(summary.stream_status.ok()) << summary.stream_status;
  EXPECT_EQ(summary.counters.messages_sent, 8u);  // good: 50 -> 5 msgs, bad: 25 -> 3 msgs
  EXPECT_EQ(summary.counters.messages_rejected, 3u);
  EXPECT_EQ(summary.counters.samples_rejected, 25u);
  EXPECT_EQ(summary.counters.samples_acked, 50u);
  ASSERT_EQ(summary.rejected.size(), 3u);
  EXPECT_EQ(summary.rejected[0].histogram, "bad");
  EXPECT_EQ(summary.rejected[0].status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(summary.rejected[0].status.message(), "index 7 at position 3 is out of range");
  EXPECT_EQ(summary.rejected[0].first_sample, 0u);
  EXPECT_EQ(summary.rejected[1].first_sample, 10u);
  EXPECT_EQ(summary.rejected[2].first_sample, 20u);
  EXPECT_EQ(summary.rejected[2].samples, 5u);
  const absl::Status overall = summary.OverallStatus();
  EXPECT_EQ(overall.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(overall.message().find("3 of 8 messages rejected"), absl::string_view::npos) << overall;
  // Nothing was sent twice.
  EXPECT_EQ(ingest_.ReceivedCount(), 8u);
}

TEST_F(ClientFakeServerTest, IngestWindowBoundsMessagesInFlight) {
  ingest_.SetHold(true);
  IngestStreamOptions options;
  options.max_message_bytes = 4;  // one index per message
  options.max_in_flight_messages = 3;
  std::unique_ptr<IngestStream> stream = client_->OpenIngestStream(options);
  std::atomic<bool> done{false};
  std::thread producer([&] {
    std::vector<uint32_t> idx(10, 0);
    EXPECT_TRUE(stream->SendIndices("h", idx).ok());
    done = true;
  });
  // The server holds every ack: the producer must stop at the window.
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_FALSE(done.load());
  EXPECT_EQ(stream->counters().messages_sent, 3u);
  EXPECT_EQ(stream->counters().messages_in_flight(), 3u);
  ingest_.SetHold(false);
  producer.join();
  IngestSummary summary = stream->Finish();
  EXPECT_TRUE(summary.OverallStatus().ok()) << summary.OverallStatus();
  EXPECT_EQ(summary.counters.messages_acked, 10u);
}

TEST_F(ClientFakeServerTest, IngestStreamFailureIsReportedNotRetried) {
  ingest_.SetFailAfter(3);
  IngestStreamOptions options;
  options.max_message_bytes = 4;
  options.max_in_flight_messages = 2;
  std::unique_ptr<IngestStream> stream = client_->OpenIngestStream(options);
  std::vector<uint32_t> idx(50, 0);
  const absl::Status sent = stream->SendIndices("h", idx);
  EXPECT_EQ(sent.code(), absl::StatusCode::kUnavailable) << sent;
  // Later sends fail fast.
  EXPECT_EQ(stream->SendIndices("h", idx).code(), absl::StatusCode::kUnavailable);
  IngestSummary summary = stream->Finish();
  EXPECT_EQ(summary.stream_status.code(), absl::StatusCode::kResourceExhausted) << summary.stream_status;
  EXPECT_EQ(summary.stream_status.message(), "fake server gives up");
  EXPECT_EQ(summary.counters.messages_acked, 2u);
  EXPECT_EQ(summary.unacknowledged, summary.counters.messages_sent - 2);
  EXPECT_GE(summary.unacknowledged, 1u);
  EXPECT_EQ(summary.OverallStatus().code(), absl::StatusCode::kResourceExhausted);
  // Only what the producer sent once reached the server.
  EXPECT_LE(ingest_.ReceivedCount(), summary.counters.messages_sent);
  EXPECT_EQ(stream->Finish().stream_status.code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(ClientFakeServerTest, IngestOutOfOrderAckIsAProtocolError) {
  ingest_.SetWrongSequence();
  IngestStreamOptions options;
  options.max_message_bytes = 4;
  std::unique_ptr<IngestStream> stream = client_->OpenIngestStream(options);
  std::vector<uint32_t> idx(5, 0);
  (void)stream->SendIndices("h", idx);
  IngestSummary summary = stream->Finish();
  EXPECT_EQ(summary.stream_status.code(), absl::StatusCode::kInternal) << summary.stream_status;
  EXPECT_EQ(summary.counters.messages_acked, 2u);
}

TEST_F(ClientFakeServerTest, IngestMalformedCallsAddNothing) {
  std::unique_ptr<IngestStream> stream = client_->OpenIngestStream();
  const float three[3] = {1, 2, 3};
  EXPECT_EQ(stream->SendXY("h", three).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(stream->Send("h", v1::SAMPLE_TYPE_BIN_INDEX_U32, "abc").code(), absl::StatusCode::kInvalidArgument);
  IngestSummary summary = stream->Finish();
  EXPECT_TRUE(summary.OverallStatus().ok());
  EXPECT_EQ(summary.counters.messages_sent, 0u);
  EXPECT_EQ(stream->SendIndices("h", std::vector<uint32_t>{1}).code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(ClientFakeServerTest, DestroyingAnUnfinishedStreamCancelsIt) {
  ingest_.SetHold(true);
  {
    IngestStreamOptions options;
    options.max_message_bytes = 4;
    std::unique_ptr<IngestStream> stream = client_->OpenIngestStream(options);
    ASSERT_TRUE(stream->SendIndices("h", std::vector<uint32_t>{1, 2}).ok());
  }  // must not hang
  ingest_.SetHold(false);
}

TEST_F(ClientFakeServerTest, QueryReassemblesChunks) {
  for (uint32_t chunk : {0u, 1u, 1000u, 37037u, 1u << 20}) {
    v1::QueryRequest request;
    request.set_name("h");
    request.set_max_chunk_bytes(chunk);
    if (chunk == 1) query_.rows = 3, query_.cols = 5;
    absl::StatusOr<QueryResult> result = client_->Query(request);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->dtype, v1::DTYPE_U8);
    EXPECT_EQ(result->cap, 200u);
    EXPECT_EQ(result->rows, query_.rows);
    EXPECT_EQ(result->cols, query_.cols);
    EXPECT_EQ(result->bytes, FakeQuery::Pattern(query_.rows * query_.cols));
    query_.rows = 37, query_.cols = 1001;
  }
}

TEST_F(ClientFakeServerTest, QueryChecksOffsetsAndTotals) {
  v1::QueryRequest request;
  request.set_name("h");
  request.set_max_chunk_bytes(1000);
  for (FakeQuery::Mode mode : {FakeQuery::Mode::kGap, FakeQuery::Mode::kOverrun, FakeQuery::Mode::kShort}) {
    query_.mode = mode;
    EXPECT_EQ(client_->Query(request).status().code(), absl::StatusCode::kInternal)
        << static_cast<int>(mode);
  }
  query_.mode = FakeQuery::Mode::kNotFound;
  const absl::Status s = client_->Query(request).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "histogram 'h' not found");
}

TEST_F(ClientFakeServerTest, UnaryCallsKeepCodeAndMessage) {
  v1::GetHistogramInfoRequest request;
  request.set_name("known");
  absl::StatusOr<v1::HistogramInfo> info = client_->GetHistogramInfo(request);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->samples_applied(), 42u);
  request.set_name("other");
  info = client_->GetHistogramInfo(request);
  EXPECT_EQ(info.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(info.status().message(), "histogram 'x' not found");
  // Not registered on the fake: the transport's own status comes through.
  EXPECT_EQ(client_->Reduce(v1::ReduceRequest()).status().code(), absl::StatusCode::kUnimplemented);
  // The fake has no health service registered either.
  EXPECT_EQ(client_->CheckHealth().status().code(), absl::StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace histd::client
