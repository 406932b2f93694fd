// Adversarial requests through real gRPC: each case answers with a specific status within a
// second while the daemon keeps serving other clients. One test per defect it guards:
// shapes whose byte sizes overflow or whose extents are empty, tiny requests that would
// allocate gigabytes, the memory budget and its stats, the concurrent-query limit,
// projections sized before they are computed, oversized ingest messages, producers that
// never read their acknowledgements, calls that waited past their deadline, and compute
// abandoned mid-way when its deadline passes.
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/generic/generic_stub.h>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "tests/server/grpc/service_fixture.h"
#include "tests/server/http/loopback_http.h"

namespace histd::server::testing {
namespace {

class HardeningTest : public ServiceTest {
 protected:
  // A u8 array of the given shape with no data (rows * cols == 0) or `data`.
  static v1::ArrayInput InlineU8(uint64_t rows, uint64_t cols, std::string data = {}) {
    v1::ArrayInput in;
    v1::Array* a = in.mutable_inline_();
    a->set_dtype(v1::DTYPE_U8);
    a->set_rows(rows);
    a->set_cols(cols);
    a->set_data(std::move(data));
    return in;
  }
  static v1::ArrayInput InlineF32(uint64_t rows, uint64_t cols) {
    v1::ArrayInput in;
    v1::Array* a = in.mutable_inline_();
    a->set_dtype(v1::DTYPE_F32);
    a->set_rows(rows);
    a->set_cols(cols);
    a->set_data(std::string(rows * cols * 4, '\0'));
    return in;
  }

  grpc::Status Reduce(const v1::ArrayInput& input, v1::Dim collapse, v1::ReduceResponse* out) {
    v1::ReduceRequest req;
    req.set_op(v1::REDUCE_OP_SUM);
    req.set_collapse(collapse);
    *req.mutable_input() = input;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    return compute_->Reduce(&ctx, req, out);
  }
  grpc::Status Scan(const v1::ArrayInput& input, v1::Dim along, v1::ScanResponse* out) {
    v1::ScanRequest req;
    req.set_kind(v1::SCAN_KIND_INCLUSIVE);
    req.set_along(along);
    *req.mutable_input() = input;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    return compute_->Scan(&ctx, req, out);
  }
  v1::ServerStats Stats() {
    v1::ServerStats stats;
    grpc::ClientContext ctx;
    EXPECT_TRUE(histograms_->GetServerStats(&ctx, {}, &stats).ok());
    return stats;
  }
  // The daemon still answers an ordinary call.
  void ExpectServing() {
    v1::ListHistogramsResponse list;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
    EXPECT_TRUE(histograms_->ListHistograms(&ctx, {}, &list).ok());
  }
};
HISTD_INSTANTIATE_ENGINES(HardeningTest);

constexpr uint64_t k2To62 = uint64_t{1} << 62;

TEST_P(HardeningTest, ReduceWhoseResultSizeOverflowsIsInvalidArgument) {
  // 2^62 x 0 u8, summed along the columns: a 2^62 x 1 u64 result, 2^65 bytes (it crashed).
  v1::ReduceResponse out;
  grpc::Status s = Reduce(InlineU8(k2To62, 0), v1::DIM_COLS, &out);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_NE(s.error_message().find("overflow"), std::string::npos) << s.error_message();
  // 0 x 2^62 along the rows: a 1 x 2^62 u64 result (it answered OK with no data).
  s = Reduce(InlineU8(0, k2To62), v1::DIM_ROWS, &out);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  ExpectServing();
}

TEST_P(HardeningTest, ScanOfAnEmptyArrayWithAHugeDimensionReturnsAtOnce) {
  // It spun forever in the thread pool, one worker per request.
  for (v1::Dim along : {v1::DIM_COLS, v1::DIM_ROWS, v1::DIM_UNSPECIFIED}) {
    v1::ScanResponse out;
    const absl::Time begin = absl::Now();
    grpc::Status s = Scan(InlineU8(k2To62, 0), along, &out);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_LT(absl::Now() - begin, absl::Seconds(1));
    EXPECT_EQ(out.result().rows(), k2To62);
    EXPECT_EQ(out.result().cols(), 0u);
    EXPECT_EQ(out.result().dtype(), v1::DTYPE_U64);
    EXPECT_TRUE(out.result().data().empty());
  }
  ExpectServing();
}

TEST_P(HardeningTest, TinyRequestsForHugeResultsAreRefusedBeforeAllocating) {
  // 2^27 x 0 summed along the columns: 2^27 u64 zeros, 1 GiB; it was allocated and filled.
  v1::ReduceResponse out;
  grpc::Status s = Reduce(InlineU8(uint64_t{1} << 27, 0), v1::DIM_COLS, &out);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_NE(s.error_message().find("--max_message_bytes"), std::string::npos);
  // 16384 x 0 @ 0 x 16384: a 1 GiB float result.
  v1::MatmulRequest mm;
  *mm.mutable_a() = InlineF32(16384, 0);
  *mm.mutable_b() = InlineF32(0, 16384);
  v1::MatmulResponse mout;
  grpc::ClientContext ctx;
  s = compute_->Matmul(&ctx, mm, &mout);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  // Nothing was charged and kept: the host budget holds only the fixed buffers.
  const v1::ServerStats stats = Stats();
  EXPECT_LT(stats.memory_peak_bytes(), stats.memory_budget_bytes());
  ExpectServing();
}

TEST_P(HardeningTest, EmptyExtentsGiveExactEmptyOrZeroResults) {
  // A sum over an empty extent is zero; a small result of an empty input is answered.
  v1::ReduceResponse out;
  ASSERT_TRUE(Reduce(InlineU8(1000, 0), v1::DIM_COLS, &out).ok());
  EXPECT_EQ(out.result().rows(), 1000u);
  EXPECT_EQ(out.result().cols(), 1u);
  EXPECT_EQ(out.result().data(), std::string(8000, '\0'));
  // k = 0: a 3 x 2 zero matrix.
  v1::MatmulRequest mm;
  *mm.mutable_a() = InlineF32(3, 0);
  *mm.mutable_b() = InlineF32(0, 2);
  v1::MatmulResponse mout;
  grpc::ClientContext ctx;
  ASSERT_TRUE(compute_->Matmul(&ctx, mm, &mout).ok());
  EXPECT_EQ(mout.result().data(), std::string(24, '\0'));
}

// On the CUDA engine the budget is per device: with every device 2 MiB full, a histogram
// that fits in none of them is refused, once, though the devices' free bytes add up to more.
TEST_P(HardeningTest, HistogramsBeyondTheMemoryBudgetAreResourceExhausted) {
  Options o = DefaultOptions();
  const bool host = GetParam() == "cpu";
  // Room for the fixed buffers plus 3 MiB of histograms (host), or 3 MiB on each device.
  o.pipeline.staging_buffers = 2;
  o.pipeline.staging_buffer_bytes = 1 << 20;
  const uint64_t fixed = 2 * (1 << 20) + o.rpc_workers * (uint64_t{1} << 20);
  if (host) {
    o.limits.max_memory_bytes = fixed + (3 << 20);
  } else {
    o.limits.max_device_memory_bytes = 3 << 20;
  }
  o.http.address = "127.0.0.1:0";
  StartServer(o);
  const uint64_t devices = host ? 1 : Stats().device_memory_budget_bytes() / (3 << 20);
  ASSERT_GE(devices, 1u);
  for (uint64_t i = 0; i < 2 * devices; ++i) {
    ASSERT_TRUE(Create(absl::StrCat("h", i), 1024, 1024).ok()) << i;
  }
  grpc::Status s = Create("c", 1024, 1024 + 1);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_NE(s.error_message().find(host ? "--max_memory_bytes" : "--max_device_memory_bytes"),
            std::string::npos)
      << s.error_message();
  EXPECT_NE(s.error_message().find("'c'"), std::string::npos) << s.error_message();
  v1::ServerStats stats = Stats();
  if (host) {
    EXPECT_EQ(stats.memory_used_bytes(), fixed + (2 << 20));
    EXPECT_EQ(stats.memory_refusals(), 1u);
  } else {
    EXPECT_EQ(stats.device_memory_used_bytes(), devices * (2 << 20));
    EXPECT_EQ(stats.device_memory_refusals(), 1u);
  }
  // /metrics: each device's budget on its own series (two histograms placed on each), the
  // sums on histd_memory_budget_bytes; the CPU engine has no device budget.
  const std::string metrics = testing::GetHttp(server_->http_address(), "/metrics").body;
  ASSERT_NE(metrics.find("histd_memory_budget_bytes"), std::string::npos) << metrics;
  if (host) {
    EXPECT_EQ(metrics.find("histd_device_memory_budget_bytes"), std::string::npos);
  } else {
    for (uint64_t d = 0; d < devices; ++d) {
      for (auto [state, bytes] : {std::pair{"limit", 3 << 20}, std::pair{"used", 2 << 20},
                                  std::pair{"peak", 2 << 20}}) {
        const std::string series = absl::StrCat("histd_device_memory_budget_bytes{device=\"cuda:", d,
                                                "\",state=\"", state, "\"} ", bytes, "\n");
        EXPECT_NE(metrics.find(series), std::string::npos) << series << metrics;
      }
    }
  }
  // Deleting gives the bytes back.
  v1::DeleteHistogramRequest del;
  del.set_name("h0");
  v1::DeleteHistogramResponse del_out;
  grpc::ClientContext ctx;
  ASSERT_TRUE(histograms_->DeleteHistogram(&ctx, del, &del_out).ok());
  EXPECT_TRUE(Create("c", 1024, 1024).ok());
}

TEST_P(HardeningTest, ComputeBeyondTheHostBudgetIsResourceExhausted) {
  Options o = DefaultOptions();
  o.pipeline.staging_buffers = 2;
  o.pipeline.staging_buffer_bytes = 1 << 20;
  o.limits.max_memory_bytes = 2 * (1 << 20) + o.rpc_workers * (uint64_t{1} << 20) + (8 << 20);
  StartServer(o);
  // Transposing 4 MiB: the result twice plus the request's 4 MiB exceed the 8 MiB left.
  v1::TransposeRequest t;
  *t.mutable_input() = InlineU8(2048, 2048, std::string(2048 * 2048, '\1'));
  v1::TransposeResponse out;
  grpc::ClientContext ctx;
  grpc::Status s = compute_->Transpose(&ctx, t, &out);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_NE(s.error_message().find("host memory"), std::string::npos) << s.error_message();
  // 1 MiB fits, and its charge is returned afterwards.
  *t.mutable_input() = InlineU8(1024, 1024, std::string(1024 * 1024, '\1'));
  grpc::ClientContext ctx2;
  ASSERT_TRUE(compute_->Transpose(&ctx2, t, &out).ok());
  EXPECT_TRUE(WaitUntil([&] {
    const v1::ServerStats stats = Stats();
    return stats.memory_used_bytes() == 2 * (1 << 20) + o.rpc_workers * (uint64_t{1} << 20);
  }));
}

// The CUDA engine reserves every device buffer of a compute call (input copies, float32
// operands, results, workspaces) against --max_device_memory_bytes before allocating it.
TEST_P(HardeningTest, ComputeBeyondTheDeviceBudgetIsResourceExhausted) {
  if (GetParam() == "cpu") {
    GTEST_SKIP() << "the CPU engine has no device memory: its compute memory is the host "
                    "budget's (ComputeBeyondTheHostBudgetIsResourceExhausted)";
  }
  Options o = DefaultOptions();
  o.limits.max_device_memory_bytes = 4 << 20;
  StartServer(o);
  const auto device_used = [&] { return Stats().device_memory_used_bytes(); };
  // Transposing 4 MiB: its copy on the device fits the 4 MiB, its result does not.
  v1::TransposeRequest t;
  *t.mutable_input() = InlineU8(2048, 2048, std::string(2048 * 2048, '\1'));
  v1::TransposeResponse out;
  grpc::ClientContext ctx;
  grpc::Status s = compute_->Transpose(&ctx, t, &out);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_NE(s.error_message().find("--max_device_memory_bytes"), std::string::npos)
      << s.error_message();
  EXPECT_EQ(Stats().device_memory_refusals(), 1u);
  EXPECT_TRUE(WaitUntil([&] { return device_used() == 0; })) << device_used();
  // 1 MiB fits (copy and result: 2 MiB), and its reservations are returned afterwards.
  *t.mutable_input() = InlineU8(1024, 1024, std::string(1024 * 1024, '\1'));
  grpc::ClientContext ctx2;
  s = compute_->Transpose(&ctx2, t, &out);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(out.result().data(), std::string(1024 * 1024, '\1'));
  EXPECT_TRUE(WaitUntil([&] { return device_used() == 0; })) << device_used();

  // A histogram's own bins are the store's; a matmul of it with itself widens both operands
  // to float32 on the device (2.25 MiB each, with its 0.56 MiB of bins: over 4 MiB).
  ASSERT_TRUE(Create("h", 768, 768).ok());
  const uint64_t bins = device_used();
  EXPECT_GE(bins, 768u * 768u);
  v1::MatmulRequest mm;
  mm.mutable_a()->set_histogram("h");
  mm.mutable_b()->set_histogram("h");
  v1::MatmulResponse mout;
  grpc::ClientContext ctx3;
  s = compute_->Matmul(&ctx3, mm, &mout);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_NE(s.error_message().find("device memory"), std::string::npos) << s.error_message();
  EXPECT_EQ(Stats().device_memory_refusals(), 2u);
  EXPECT_TRUE(WaitUntil([&] { return device_used() == bins; })) << device_used();
  // The daemon keeps serving: a reduce of the histogram fits, and so does a new histogram.
  v1::ReduceRequest r;
  r.set_op(v1::REDUCE_OP_SUM);
  r.mutable_input()->set_histogram("h");
  v1::ReduceResponse rout;
  grpc::ClientContext ctx4;
  s = compute_->Reduce(&ctx4, r, &rout);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(rout.result().rows(), 1u);
  EXPECT_EQ(rout.result().cols(), 1u);
  EXPECT_TRUE(Create("small", 64, 64).ok());
  EXPECT_TRUE(WaitUntil([&] { return device_used() >= bins + 64 * 64; })) << device_used();
}

TEST_P(HardeningTest, ProjectionsTooLargeToSendAreRefusedBeforeTheyAreComputed) {
  Options o = DefaultOptions();
  o.limits.max_message_bytes = 64 << 10;
  StartServer(o);
  // 1 x 16384: one u64 per column is 128 KiB, over the 64 KiB limit.
  ASSERT_TRUE(Create("wide", 1, 16384).ok());
  v1::ProjectRequest p;
  p.set_name("wide");
  p.set_collapse(v1::DIM_ROWS);
  v1::ProjectResponse pout;
  grpc::ClientContext ctx;
  grpc::Status s = query_->Project(&ctx, p, &pout);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  v1::CdfRequest c;
  c.set_name("wide");
  c.set_collapse(v1::DIM_ROWS);
  v1::CdfResponse cout;
  grpc::ClientContext ctx2;
  s = query_->Cdf(&ctx2, c, &cout);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  // The other projection, 1 value, is fine, and is sent fixed-width.
  p.set_collapse(v1::DIM_COLS);
  grpc::ClientContext ctx3;
  ASSERT_TRUE(query_->Project(&ctx3, p, &pout).ok());
  ASSERT_EQ(pout.counts_size(), 1);
  EXPECT_EQ(pout.ByteSizeLong(), 2u + 8u);  // tag, length, one fixed64
}

TEST_P(HardeningTest, QueriesBeyondTheConcurrencyLimitAreRefused) {
  Options o = DefaultOptions();
  o.limits.max_concurrent_queries = 2;
  StartServer(o);
  ASSERT_TRUE(Create("h", 1024, 1024).ok());
  // Two readers that start a query in 1-byte chunks and stop reading.
  v1::QueryRequest q;
  q.set_name("h");
  q.set_max_chunk_bytes(1);
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<v1::QueryChunk>>> readers;
  for (int i = 0; i < 2; ++i) {
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    readers.push_back(query_->Query(contexts.back().get(), q));
    v1::QueryChunk chunk;
    ASSERT_TRUE(readers.back()->Read(&chunk));
  }
  EXPECT_EQ(Stats().active_queries(), 2u);
  const QueryOutcome third = QueryWhole("h");
  EXPECT_EQ(third.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << third.status.error_message();
  EXPECT_NE(third.status.error_message().find("--max_concurrent_queries"), std::string::npos);
  v1::ProjectRequest p;
  p.set_name("h");
  p.set_collapse(v1::DIM_ROWS);
  v1::ProjectResponse pout;
  grpc::ClientContext pctx;
  EXPECT_EQ(query_->Project(&pctx, p, &pout).error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(Stats().query_refusals(), 2u);
  ExpectServing();
  // Once the stalled readers give up, queries are served again.
  for (auto& c : contexts) c->TryCancel();
  for (auto& r : readers) (void)r->Finish();
  readers.clear();
  ASSERT_TRUE(WaitUntil([&] { return Stats().active_queries() == 0; }));
  EXPECT_TRUE(QueryWhole("h").status.ok());
}

TEST_P(HardeningTest, AnOversizedIngestMessageIsRefusedAloneAndTheStreamGoesOn) {
  Options o = DefaultOptions();
  o.limits.max_message_bytes = 64 << 10;
  StartServer(o);
  ASSERT_TRUE(Create("h", 16, 16).ok());
  std::vector<v1::IngestRequest> requests;
  requests.push_back(IndexMessage(1, "h", {1, 2, 3}));
  requests.push_back(IndexMessage(2, "h", std::vector<uint32_t>(20000, 5)));  // 80 KB
  requests.push_back(IndexMessage(3, "h", {4}));
  const StreamOutcome out = IngestAll(requests);
  ASSERT_TRUE(out.status.ok()) << out.status.error_message();
  ASSERT_EQ(out.acks.size(), 3u);
  EXPECT_EQ(out.acks[0].code(), grpc::StatusCode::OK);
  EXPECT_EQ(out.acks[1].sequence(), 2u);
  EXPECT_EQ(out.acks[1].code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << out.acks[1].message();
  EXPECT_NE(out.acks[1].message().find("--max_message_bytes"), std::string::npos);
  EXPECT_EQ(out.acks[2].code(), grpc::StatusCode::OK);
  EXPECT_EQ(Info("h").samples_applied(), 4u);
}

TEST_P(HardeningTest, AProducerThatNeverReadsAcksStopsBeingRead) {
  Options o = DefaultOptions();
  o.limits.max_unsent_acks_per_stream = 16;
  StartServer(o);
  ASSERT_TRUE(Create("h", 16, 16).ok());
  // 1 KiB messages, many more than fit the transport's windows, and no reads. Without BDP
  // probing the client's receive window stays at 64 KiB, so unread acks stop the server's
  // writes after a few thousand (with it, gRPC grows the window to megabytes first).
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
  auto channel =
      grpc::CreateCustomChannel(server_->address(), grpc::InsecureChannelCredentials(), args);
  auto ingest = v1::Ingest::NewStub(channel);
  const v1::IngestRequest message = IndexMessage(0, "h", std::vector<uint32_t>(256, 7));
  constexpr int kMessages = 40000;
  grpc::ClientContext ctx;
  auto stream = ingest->Ingest(&ctx);
  std::atomic<int> written{0};
  std::thread writer([&] {
    for (int i = 0; i < kMessages; ++i) {
      v1::IngestRequest r = message;
      r.set_sequence(i);
      if (!stream->Write(r)) return;
      written.fetch_add(1);
    }
  });
  // The server stops reading: the writer blocks and the messages applied plateau.
  uint64_t applied = 0;
  EXPECT_TRUE(WaitUntil(
      [&] {
        const uint64_t before = Info("h").messages_applied();
        absl::SleepFor(absl::Milliseconds(300));
        applied = Info("h").messages_applied();
        return applied == before && applied > 0;
      },
      absl::Seconds(10)));
  EXPECT_LT(written.load(), kMessages);
  EXPECT_LT(applied, uint64_t{kMessages});
  ExpectServing();
  // Reading resumes the stream; every message is acknowledged OK, none lost.
  std::thread reader([&] {
    v1::IngestResponse r;
    int acks = 0;
    while (stream->Read(&r)) {
      EXPECT_EQ(r.code(), grpc::StatusCode::OK);
      EXPECT_EQ(r.sequence(), static_cast<uint64_t>(acks));
      ++acks;
    }
    EXPECT_EQ(acks, kMessages);
  });
  writer.join();
  stream->WritesDone();
  reader.join();
  EXPECT_TRUE(stream->Finish().ok());
  EXPECT_EQ(Info("h").messages_applied(), uint64_t{kMessages});
}

TEST_P(HardeningTest, ASnapshotDirectoryThatTakesNoFileRefusesTheStart) {
  Options o = DefaultOptions();
  o.snapshot.path = "/nonexistent-histd-dir/histograms.snapshot";
  absl::StatusOr<std::unique_ptr<HistdServer>> server = HistdServer::Start(o);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kFailedPrecondition) << server.status();
  EXPECT_NE(server.status().message().find("--snapshot_path"), std::string::npos);
  // Under a regular file: refused for root too, whom permission bits do not stop.
  const std::string file = ::testing::TempDir() + "/histd-hardening-file";
  { std::ofstream(file) << "x"; }
  o.snapshot.path = file + "/histograms.snapshot";
  server = HistdServer::Start(o);
  EXPECT_EQ(server.status().code(), absl::StatusCode::kFailedPrecondition) << server.status();
  std::remove(file.c_str());
}

TEST_P(HardeningTest, AFailedSnapshotIsCountedAndAFailedFinalSnapshotEndsWithDataLoss) {
  const std::string dir = ::testing::TempDir() + "/histd-hardening-snapshots";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  Options o = DefaultOptions();
  o.snapshot.path = dir + "/histograms.snapshot";
  StartServer(o);
  ASSERT_TRUE(Create("h", 8, 8).ok());
  // The directory goes away while serving: the requested snapshot fails and is counted.
  std::filesystem::remove_all(dir);
  { std::ofstream(dir) << "not a directory"; }
  v1::WriteSnapshotResponse written;
  grpc::ClientContext ctx;
  EXPECT_FALSE(histograms_->WriteSnapshot(&ctx, {}, &written).ok());
  EXPECT_EQ(Stats().snapshot_failures(), 1u);
  // The final snapshot fails too: the shutdown reports DATA_LOSS (main exits non-zero).
  server_->Shutdown(absl::Seconds(5));
  const absl::Status outcome = server_->Wait();
  EXPECT_EQ(outcome.code(), absl::StatusCode::kDataLoss) << outcome;
  std::filesystem::remove(dir);
}

TEST_P(HardeningTest, ComputeWhoseDeadlinePassesMidwayFreesItsWorker) {
  if (GetParam() == "cuda") GTEST_SKIP() << "device kernels are not interrupted (milliseconds)";
  // One worker and one engine thread: a 34 GFLOP matmul holds the worker for seconds unless
  // its engine loops stop at the deadline.
  Options o = DefaultOptions();
  o.rpc_workers = 1;
  o.engine.cpu_threads = 1;
  StartServer(o);
  ASSERT_TRUE(Create("a", 4096, 4096).ok());
  ASSERT_TRUE(Create("b", 4096, 1024).ok());
  v1::MatmulRequest mm;
  mm.mutable_a()->set_histogram("a");
  mm.mutable_b()->set_histogram("b");
  v1::MatmulResponse mout;
  grpc::ClientContext slow;
  slow.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(200));
  const grpc::Status s = compute_->Matmul(&slow, mm, &mout);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << s.error_message();
  // The worker is free again within a second: the next compute call is answered.
  const auto begin = std::chrono::steady_clock::now();
  v1::ReduceResponse out;
  const grpc::Status next = Reduce(InlineU8(2, 2, std::string(4, '\1')), v1::DIM_UNSPECIFIED, &out);
  ASSERT_TRUE(next.ok()) << next.error_message();
  EXPECT_EQ(out.result().data(), std::string("\4\0\0\0\0\0\0\0", 8));
  EXPECT_LT(std::chrono::steady_clock::now() - begin, std::chrono::seconds(1));
  ExpectServing();
}

TEST_P(HardeningTest, AnUnparsableRequestIsInvalidArgumentNamingTheMethod) {
  // Bytes that are no ReduceRequest (a field 1 whose length runs past the end), sent
  // through the generic stub as they are.
  grpc::GenericStub generic(channel_);
  const char garbage[] = {0x0a, 0x7f, 0x01};
  grpc::Slice slice(garbage, sizeof(garbage));
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::ClientContext ctx;
  grpc::Status status;
  absl::Notification done;
  generic.UnaryCall(&ctx, "/histd.v1.Compute/Reduce", grpc::StubOptions(), &request, &response,
                    [&](grpc::Status s) {
                      status = std::move(s);
                      done.Notify();
                    });
  ASSERT_TRUE(done.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();
  EXPECT_NE(status.error_message().find("/histd.v1.Compute/Reduce"), std::string::npos);
  // A method the server lacks is still UNIMPLEMENTED.
  grpc::ClientContext ctx2;
  absl::Notification done2;
  generic.UnaryCall(&ctx2, "/histd.v1.Compute/NoSuchMethod", grpc::StubOptions(), &request,
                    &response, [&](grpc::Status s) {
                      status = std::move(s);
                      done2.Notify();
                    });
  ASSERT_TRUE(done2.WaitForNotificationWithTimeout(absl::Seconds(5)));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  ExpectServing();
}

}  // namespace
}  // namespace histd::server::testing
