// The service-test fixture: a HistdServer started in-process on 127.0.0.1:0, talked to
// through real gRPC stubs (histd.v1 generated code, no client library), plus the
// independent references the tests compare against (plain loops).
//
// Parameterized over engine kinds: "cpu" always runs; "cuda" reports SKIPPED when this
// build has no CUDA engine or no GPU is visible.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "gtest/gtest.h"
#include "histd/v1/compute.grpc.pb.h"
#include "histd/v1/histograms.grpc.pb.h"
#include "histd/v1/ingest.grpc.pb.h"
#include "histd/v1/query.grpc.pb.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "engine/engine_factory.h"
#include "server/core/log.h"
#include "server/core/options.h"
#include "server/grpc/server.h"

namespace histd::server::testing {

namespace v1 = ::histd::v1;

inline std::string PackU32(const std::vector<uint32_t>& v) {
  std::string s(v.size() * 4, '\0');
  if (!v.empty()) std::memcpy(s.data(), v.data(), s.size());
  return s;
}

inline std::string PackXY(const std::vector<std::pair<float, float>>& v) {
  std::string s(v.size() * 8, '\0');
  for (size_t i = 0; i < v.size(); ++i) {
    std::memcpy(&s[8 * i], &v[i].first, 4);
    std::memcpy(&s[8 * i + 4], &v[i].second, 4);
  }
  return s;
}

inline v1::IngestRequest IndexMessage(uint64_t sequence, const std::string& histogram,
                                      const std::vector<uint32_t>& indices) {
  v1::IngestRequest r;
  r.set_sequence(sequence);
  r.set_histogram(histogram);
  r.set_type(v1::SAMPLE_TYPE_BIN_INDEX_U32);
  r.set_samples(PackU32(indices));
  return r;
}

// min(cap, hits) per bin: the model every engine must match exactly.
struct ReferenceHistogram {
  uint32_t rows = 0, cols = 0, cap = 255;
  std::vector<uint64_t> hits;

  ReferenceHistogram(uint32_t r, uint32_t c, uint32_t k) : rows(r), cols(c), cap(k), hits(uint64_t{r} * c) {}
  void Add(const std::vector<uint32_t>& indices) {
    for (uint32_t i : indices) hits[i] += 1;
  }
  uint8_t Bin(uint64_t i) const { return static_cast<uint8_t>(hits[i] < cap ? hits[i] : cap); }
  uint8_t Bin(uint64_t r, uint64_t c) const { return Bin(r * cols + c); }
  std::string Bytes() const {
    std::string s(hits.size(), '\0');
    for (size_t i = 0; i < hits.size(); ++i) s[i] = static_cast<char>(Bin(i));
    return s;
  }
  uint64_t Total() const {
    uint64_t t = 0;
    for (size_t i = 0; i < hits.size(); ++i) t += Bin(i);
    return t;
  }
};

// A reassembled Query stream, with what the chunks looked like.
struct QueryOutcome {
  grpc::Status status;
  v1::DType dtype = v1::DTYPE_UNSPECIFIED;
  uint64_t rows = 0, cols = 0, total_bytes = 0;
  uint32_t cap = 0;
  std::string data;
  size_t chunks = 0;
  size_t largest_chunk = 0;
  bool offsets_contiguous = true;
  bool header_only_in_first = true;
};

// What one ingest stream got back.
struct StreamOutcome {
  grpc::Status status;
  std::vector<v1::IngestResponse> acks;
};

class ServiceTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "cuda" && !CudaEngineAvailable()) {
      GTEST_SKIP() << "no CUDA engine in this build or no GPU visible";
    }
    if (std::getenv("HISTD_TEST_LOG") == nullptr) SetLogLevel(LogLevel::kOff);
    StartServer(DefaultOptions());
  }
  void TearDown() override { StopServer(); }

  Options DefaultOptions() const {
    Options o;
    o.address = "127.0.0.1:0";
    o.engine.kind = GetParam() == "cuda" ? EngineKind::kCuda : EngineKind::kCpu;
    o.engine.cpu_threads = 2;
    o.rpc_workers = 2;
    return o;
  }

  void StartServer(const Options& options) {
    StopServer();
    absl::StatusOr<std::unique_ptr<HistdServer>> server = HistdServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(-1);
    args.SetMaxSendMessageSize(-1);
    channel_ = grpc::CreateCustomChannel(server_->address(), grpc::InsecureChannelCredentials(), args);
    histograms_ = v1::Histograms::NewStub(channel_);
    ingest_ = v1::Ingest::NewStub(channel_);
    query_ = v1::Query::NewStub(channel_);
    compute_ = v1::Compute::NewStub(channel_);
  }

  void StopServer() {
    if (server_ != nullptr) server_->Shutdown(absl::Seconds(5));
    histograms_.reset();
    ingest_.reset();
    query_.reset();
    compute_.reset();
    channel_.reset();
    server_.reset();
  }

  grpc::Status Create(const std::string& name, uint32_t rows, uint32_t cols, uint32_t cap = 255,
                      v1::HistogramInfo* info = nullptr) {
    v1::CreateHistogramRequest req;
    req.mutable_spec()->set_name(name);
    req.mutable_spec()->set_rows(rows);
    req.mutable_spec()->set_cols(cols);
    req.mutable_spec()->set_cap(cap);
    return CreateSpec(req.spec(), info);
  }

  grpc::Status CreateSpec(const v1::HistogramSpec& spec, v1::HistogramInfo* info = nullptr) {
    v1::CreateHistogramRequest req;
    *req.mutable_spec() = spec;
    v1::HistogramInfo ignored;
    grpc::ClientContext ctx;
    return histograms_->CreateHistogram(&ctx, req, info != nullptr ? info : &ignored);
  }

  v1::HistogramInfo Info(const std::string& name) {
    v1::GetHistogramInfoRequest req;
    req.set_name(name);
    v1::HistogramInfo info;
    grpc::ClientContext ctx;
    grpc::Status s = histograms_->GetHistogramInfo(&ctx, req, &info);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return info;
  }

  // Sends every request on one stream (a reader thread collects acks meanwhile), half-closes
  // and returns the acks and the final status.
  StreamOutcome IngestAll(const std::vector<v1::IngestRequest>& requests) {
    StreamOutcome out;
    grpc::ClientContext ctx;
    auto stream = ingest_->Ingest(&ctx);
    std::thread reader([&] {
      v1::IngestResponse r;
      while (stream->Read(&r)) out.acks.push_back(r);
    });
    for (const auto& r : requests) {
      if (!stream->Write(r)) break;
    }
    stream->WritesDone();
    reader.join();
    out.status = stream->Finish();
    return out;
  }

  // One message on its own stream; returns its ack (or a default one with the stream error).
  v1::IngestResponse IngestOne(const v1::IngestRequest& request) {
    StreamOutcome out = IngestAll({request});
    EXPECT_TRUE(out.status.ok()) << out.status.error_message();
    EXPECT_EQ(out.acks.size(), 1u);
    return out.acks.empty() ? v1::IngestResponse() : out.acks[0];
  }

  QueryOutcome Query(const v1::QueryRequest& request) {
    QueryOutcome out;
    grpc::ClientContext ctx;
    auto reader = query_->Query(&ctx, request);
    v1::QueryChunk chunk;
    while (reader->Read(&chunk)) {
      if (out.chunks == 0) {
        out.dtype = chunk.dtype();
        out.rows = chunk.rows();
        out.cols = chunk.cols();
        out.cap = chunk.cap();
        out.total_bytes = chunk.total_bytes();
      } else if (chunk.rows() != 0 || chunk.cols() != 0 || chunk.total_bytes() != 0) {
        out.header_only_in_first = false;
      }
      if (chunk.offset() != out.data.size()) out.offsets_contiguous = false;
      out.largest_chunk = std::max(out.largest_chunk, chunk.data().size());
      out.data += chunk.data();
      ++out.chunks;
    }
    out.status = reader->Finish();
    return out;
  }

  QueryOutcome QueryWhole(const std::string& name) {
    v1::QueryRequest req;
    req.set_name(name);
    return Query(req);
  }

  std::unique_ptr<HistdServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Histograms::Stub> histograms_;
  std::unique_ptr<v1::Ingest::Stub> ingest_;
  std::unique_ptr<v1::Query::Stub> query_;
  std::unique_ptr<v1::Compute::Stub> compute_;
};

// Polls `done` for up to `timeout`; true once it held.
template <typename Predicate>
bool WaitUntil(Predicate done, absl::Duration timeout = absl::Seconds(5)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (done()) return true;
    absl::SleepFor(absl::Milliseconds(2));
  }
  return done();
}

// A fresh seed per run, printed so that a failure can be replayed (HISTD_TEST_SEED=...).
inline uint64_t TestSeed() {
  if (const char* s = std::getenv("HISTD_TEST_SEED")) return std::strtoull(s, nullptr, 10);
  return std::random_device{}();
}

#define HISTD_INSTANTIATE_ENGINES(Suite)                                         \
  INSTANTIATE_TEST_SUITE_P(Engines, Suite, ::testing::Values("cpu", "cuda"),     \
                           [](const ::testing::TestParamInfo<std::string>& i) { \
                             return i.param;                                     \
                           })

}  // namespace histd::server::testing
