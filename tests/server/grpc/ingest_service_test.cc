// Ingest through real gRPC streams: exact bins against a reference, acknowledgement
// semantics, bad messages (exact codes, stream keeps working, nothing of them applied),
// coordinates and their under/overflow, concurrent producers, split messages and a client
// that disconnects mid-stream.
#include <atomic>
#include <cmath>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "model/histogram_types.h"
#include "tests/server/grpc/service_fixture.h"

namespace histd::server::testing {
namespace {

class IngestServiceTest : public ServiceTest {};
HISTD_INSTANTIATE_ENGINES(IngestServiceTest);

std::vector<uint32_t> RandomIndices(std::mt19937_64& rng, size_t n, uint64_t bins) {
  std::uniform_int_distribution<uint64_t> d(0, bins - 1);
  std::vector<uint32_t> v(n);
  for (auto& x : v) x = static_cast<uint32_t>(d(rng));
  return v;
}

TEST_P(IngestServiceTest, BinIndicesMatchReferenceExactly) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  const uint32_t rows = 37, cols = 61, cap = 5;  // sizes that are multiples of nothing
  ASSERT_TRUE(Create("h", rows, cols, cap).ok());
  ReferenceHistogram ref(rows, cols, cap);
  std::vector<v1::IngestRequest> msgs;
  uint64_t samples = 0;
  for (size_t n : {size_t{0}, size_t{1}, size_t{1000}, size_t{4097}, size_t{3}, size_t{20000}}) {
    std::vector<uint32_t> idx = RandomIndices(rng, n, uint64_t{rows} * cols);
    if (n == 3) idx = {0, rows * cols - 1, rows * cols - 1};  // first and last bin
    ref.Add(idx);
    samples += n;
    msgs.push_back(IndexMessage(msgs.size() + 1, "h", idx));
  }
  StreamOutcome out = IngestAll(msgs);
  ASSERT_TRUE(out.status.ok()) << out.status.error_message();
  ASSERT_EQ(out.acks.size(), msgs.size());
  for (size_t i = 0; i < msgs.size(); ++i) {
    EXPECT_EQ(out.acks[i].code(), 0) << out.acks[i].message();
    EXPECT_EQ(out.acks[i].samples(), msgs[i].samples().size() / 4);
  }
  const QueryOutcome q = QueryWhole("h");
  ASSERT_TRUE(q.status.ok()) << q.status.error_message();
  EXPECT_EQ(q.data, ref.Bytes());
  const v1::HistogramInfo info = Info("h");
  EXPECT_EQ(info.samples_applied(), samples);
  EXPECT_EQ(info.messages_applied(), msgs.size());
  EXPECT_EQ(info.total_count(), ref.Total());
  EXPECT_EQ(info.samples_rejected(), 0u);
}

TEST_P(IngestServiceTest, OneAckPerRequestInOrderWithSequenceEchoed) {
  ASSERT_TRUE(Create("h", 4, 4).ok());
  // Arbitrary sequences, valid and invalid messages, two histograms, one unknown.
  ASSERT_TRUE(Create("g", 2, 2).ok());
  std::vector<v1::IngestRequest> msgs = {
      IndexMessage(10, "h", {1, 2}),   IndexMessage(7, "nope", {1}),
      IndexMessage(99, "g", {3}),      IndexMessage(99, "h", {16}),
      IndexMessage(5, "h", {}),        IndexMessage(0, "g", {0, 0, 0}),
  };
  StreamOutcome out = IngestAll(msgs);
  ASSERT_TRUE(out.status.ok());
  ASSERT_EQ(out.acks.size(), msgs.size());
  const std::vector<int> codes = {0, grpc::StatusCode::NOT_FOUND, 0,
                                  grpc::StatusCode::INVALID_ARGUMENT, 0, 0};
  for (size_t i = 0; i < msgs.size(); ++i) {
    EXPECT_EQ(out.acks[i].sequence(), msgs[i].sequence()) << i;
    EXPECT_EQ(out.acks[i].code(), codes[i]) << i << ": " << out.acks[i].message();
    EXPECT_EQ(out.acks[i].code() == 0, out.acks[i].message().empty()) << i;
  }
  EXPECT_EQ(out.acks[0].samples(), 2u);
  EXPECT_EQ(out.acks[4].samples(), 0u);
  EXPECT_EQ(out.acks[5].samples(), 3u);
  EXPECT_EQ(Info("h").total_count(), 2u);
  EXPECT_EQ(Info("g").total_count(), 4u);
}

TEST_P(IngestServiceTest, RejectedMessageKeepsStreamAndAppliesNothingOfIt) {
  const uint32_t rows = 8, cols = 16;
  ASSERT_TRUE(Create("h", rows, cols).ok());
  const std::vector<uint32_t> before = {0, 1, 2, 127};
  const std::vector<uint32_t> bad = {5, 6, 7, rows * cols, 9};  // index == rows * cols at 3
  const std::vector<uint32_t> after = {3, 3, 100};
  StreamOutcome out = IngestAll(
      {IndexMessage(1, "h", before), IndexMessage(2, "h", bad), IndexMessage(3, "h", after)});
  ASSERT_TRUE(out.status.ok());
  ASSERT_EQ(out.acks.size(), 3u);
  EXPECT_EQ(out.acks[0].code(), 0);
  EXPECT_EQ(out.acks[1].code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(out.acks[2].code(), 0);
  const std::string& m = out.acks[1].message();
  EXPECT_NE(m.find("sample 3"), std::string::npos) << m;
  EXPECT_NE(m.find("128"), std::string::npos) << m;  // the value and the bin count
  ReferenceHistogram ref(rows, cols, 255);
  ref.Add(before);
  ref.Add(after);
  EXPECT_EQ(QueryWhole("h").data, ref.Bytes());
  const v1::HistogramInfo info = Info("h");
  EXPECT_EQ(info.messages_rejected(), 1u);
  EXPECT_EQ(info.samples_rejected(), 5u);
  EXPECT_EQ(info.messages_applied(), 2u);
  EXPECT_EQ(info.samples_applied(), 7u);
}

TEST_P(IngestServiceTest, BadMessagesGetExactCodes) {
  ASSERT_TRUE(Create("idx", 4, 4).ok());
  v1::HistogramSpec spec;
  spec.set_name("xy");
  spec.set_rows(4);
  spec.set_cols(4);
  spec.set_cap(255);
  spec.mutable_x_axis()->set_hi(1);
  spec.mutable_y_axis()->set_hi(1);
  ASSERT_TRUE(CreateSpec(spec).ok());
  struct Case {
    std::string what;
    v1::IngestRequest request;
    int code;
    std::string mentions;
  };
  auto raw = [](const std::string& h, v1::SampleType t, std::string payload) {
    v1::IngestRequest r;
    r.set_histogram(h);
    r.set_type(t);
    r.set_samples(std::move(payload));
    return r;
  };
  const std::vector<Case> cases = {
      {"7 bytes of u32", raw("idx", v1::SAMPLE_TYPE_BIN_INDEX_U32, std::string(7, '\0')),
       grpc::StatusCode::INVALID_ARGUMENT, "7 bytes"},
      {"12 bytes of xy", raw("xy", v1::SAMPLE_TYPE_XY_F32, std::string(12, '\0')),
       grpc::StatusCode::INVALID_ARGUMENT, "12 bytes"},
      {"xy without axes", raw("idx", v1::SAMPLE_TYPE_XY_F32, PackXY({{0.5f, 0.5f}})),
       grpc::StatusCode::FAILED_PRECONDITION, "axis"},
      {"index == bins", raw("idx", v1::SAMPLE_TYPE_BIN_INDEX_U32, PackU32({0, 16})),
       grpc::StatusCode::INVALID_ARGUMENT, "sample 1"},
      {"index max", raw("idx", v1::SAMPLE_TYPE_BIN_INDEX_U32, PackU32({0xffffffffu})),
       grpc::StatusCode::INVALID_ARGUMENT, "4294967295"},
      {"unknown histogram", raw("missing", v1::SAMPLE_TYPE_BIN_INDEX_U32, PackU32({0})),
       grpc::StatusCode::NOT_FOUND, "missing"},
      {"invalid name", raw("bad name", v1::SAMPLE_TYPE_BIN_INDEX_U32, PackU32({0})),
       grpc::StatusCode::INVALID_ARGUMENT, "name"},
      {"empty name", raw("", v1::SAMPLE_TYPE_BIN_INDEX_U32, PackU32({0})),
       grpc::StatusCode::INVALID_ARGUMENT, "empty"},
      {"type unspecified", raw("idx", v1::SAMPLE_TYPE_UNSPECIFIED, PackU32({0})),
       grpc::StatusCode::INVALID_ARGUMENT, "type"},
      {"type out of enum", raw("idx", static_cast<v1::SampleType>(42), PackU32({0})),
       grpc::StatusCode::INVALID_ARGUMENT, "42"},
      {"empty payload", raw("idx", v1::SAMPLE_TYPE_BIN_INDEX_U32, ""), 0, ""},
      {"empty xy payload", raw("xy", v1::SAMPLE_TYPE_XY_F32, ""), 0, ""},
  };
  std::vector<v1::IngestRequest> msgs;
  for (size_t i = 0; i < cases.size(); ++i) {
    msgs.push_back(cases[i].request);
    msgs.back().set_sequence(i + 1);
  }
  StreamOutcome out = IngestAll(msgs);  // all on one stream: none of them ends it
  ASSERT_TRUE(out.status.ok()) << out.status.error_message();
  ASSERT_EQ(out.acks.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(out.acks[i].code(), cases[i].code) << cases[i].what << ": " << out.acks[i].message();
    EXPECT_NE(out.acks[i].message().find(cases[i].mentions), std::string::npos)
        << cases[i].what << ": " << out.acks[i].message();
  }
  EXPECT_EQ(Info("idx").total_count(), 0u);
  EXPECT_EQ(Info("xy").total_count(), 0u);
  EXPECT_EQ(Info("xy").samples_outside(), 0u);
}

TEST_P(IngestServiceTest, CoordinatesBinLikeTheAxisAndCountOutside) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  const uint32_t rows = 19, cols = 23;
  const AxisRange x{-2.5f, 7.0f}, y{100.0f, 164.0f};
  v1::HistogramSpec spec;
  spec.set_name("xy");
  spec.set_rows(rows);
  spec.set_cols(cols);
  spec.set_cap(9);
  spec.mutable_x_axis()->set_lo(x.lo);
  spec.mutable_x_axis()->set_hi(x.hi);
  spec.mutable_y_axis()->set_lo(y.lo);
  spec.mutable_y_axis()->set_hi(y.hi);
  ASSERT_TRUE(CreateSpec(spec).ok());

  std::uniform_real_distribution<float> dx(-4.0f, 8.0f), dy(90.0f, 170.0f);
  std::vector<std::pair<float, float>> pts(5000);
  for (auto& p : pts) p = {dx(rng), dy(rng)};
  // Edges: lo is inside, hi is overflow, just below hi is the last bin.
  pts.push_back({x.lo, y.lo});
  pts.push_back({x.hi, y.lo});
  pts.push_back({std::nextafter(x.hi, 0.0f), std::nextafter(y.hi, 0.0f)});
  pts.push_back({-1e30f, 1e30f});

  // Reference: the binning rule of histogram_types.h written out in double-free float steps.
  ReferenceHistogram ref(rows, cols, 9);
  uint64_t xu = 0, xo = 0, yu = 0, yo = 0, outside = 0, binned = 0;
  const float sx = AxisScale(x.lo, x.hi, cols);
  const float sy = AxisScale(y.lo, y.hi, rows);
  for (auto [px, py] : pts) {
    const int64_t bx = AxisBin(px, x.lo, x.hi, sx, cols);
    const int64_t by = AxisBin(py, y.lo, y.hi, sy, rows);
    xu += bx == -1;
    xo += bx == -2;
    yu += by == -1;
    yo += by == -2;
    if (bx < 0 || by < 0) {
      ++outside;
      continue;
    }
    ++binned;
    ref.hits[static_cast<uint64_t>(by) * cols + bx] += 1;
  }
  std::vector<v1::IngestRequest> msgs;
  for (size_t begin = 0; begin < pts.size(); begin += 777) {
    std::vector<std::pair<float, float>> part(pts.begin() + begin,
                                              pts.begin() + std::min(pts.size(), begin + 777));
    v1::IngestRequest r;
    r.set_sequence(msgs.size() + 1);
    r.set_histogram("xy");
    r.set_type(v1::SAMPLE_TYPE_XY_F32);
    r.set_samples(PackXY(part));
    msgs.push_back(r);
  }
  StreamOutcome out = IngestAll(msgs);
  ASSERT_TRUE(out.status.ok());
  for (const auto& a : out.acks) ASSERT_EQ(a.code(), 0) << a.message();
  EXPECT_EQ(QueryWhole("xy").data, ref.Bytes());
  const v1::HistogramInfo info = Info("xy");
  EXPECT_EQ(info.samples_applied(), binned);
  EXPECT_EQ(info.samples_outside(), outside);
  EXPECT_EQ(info.x_underflow(), xu);
  EXPECT_EQ(info.x_overflow(), xo);
  EXPECT_EQ(info.y_underflow(), yu);
  EXPECT_EQ(info.y_overflow(), yo);
  EXPECT_GT(outside, 0u);
}

TEST_P(IngestServiceTest, ConcurrentProducersGiveExactTotals) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  const uint32_t rows = 64, cols = 96, cap = 200;
  ASSERT_TRUE(Create("shared", rows, cols, cap).ok());
  constexpr int kStreams = 4, kMessages = 150, kPerMessage = 700;
  std::vector<std::vector<v1::IngestRequest>> per_stream(kStreams);
  ReferenceHistogram ref(rows, cols, cap);
  std::mt19937_64 rng(seed);
  // Skewed: half the samples on a 4 x 4 hot region, so some bins saturate.
  std::uniform_int_distribution<uint32_t> any(0, rows * cols - 1), hot(0, 15);
  for (int s = 0; s < kStreams; ++s) {
    for (int m = 0; m < kMessages; ++m) {
      std::vector<uint32_t> idx(kPerMessage);
      for (auto& v : idx) {
        const uint32_t h = hot(rng);
        v = (rng() & 1) ? any(rng) : (h / 4) * cols + h % 4;
      }
      ref.Add(idx);
      per_stream[s].push_back(IndexMessage(m + 1, "shared", idx));
    }
  }
  std::vector<StreamOutcome> outcomes(kStreams);
  std::vector<std::thread> producers;
  for (int s = 0; s < kStreams; ++s) {
    producers.emplace_back([&, s] { outcomes[s] = IngestAll(per_stream[s]); });
  }
  for (auto& t : producers) t.join();
  for (int s = 0; s < kStreams; ++s) {
    ASSERT_TRUE(outcomes[s].status.ok()) << outcomes[s].status.error_message();
    ASSERT_EQ(outcomes[s].acks.size(), size_t{kMessages});
    for (int m = 0; m < kMessages; ++m) {
      EXPECT_EQ(outcomes[s].acks[m].sequence(), uint64_t(m + 1));
      EXPECT_EQ(outcomes[s].acks[m].code(), 0);
    }
  }
  EXPECT_EQ(QueryWhole("shared").data, ref.Bytes());
  const v1::HistogramInfo info = Info("shared");
  EXPECT_EQ(info.samples_applied(), uint64_t{kStreams} * kMessages * kPerMessage);
  EXPECT_EQ(info.total_count(), ref.Total());
  EXPECT_GT(info.saturated_bins(), 0u);
}

// Staging on the receiving thread (no stagers) and on stager threads (every message),
// the latter also with a read-ahead of three minimum charges per stream and the cached copy. The
// tests pair them with acknowledgements sent on the engine's thread (no acknowledgers) and
// on acknowledger threads, and batches applied by the flusher thread itself (no flush
// threads) and by flush threads.
struct StagerMode {
  int stagers;
  size_t read_ahead_bytes;
  CopyStores stores = CopyStores::kAuto;
  int flush_threads = 2;
  // Messages of one stream that may be parked at once (each counts at least
  // kReadAheadMinChargeBytes; the last one read may cross the budget).
  uint64_t MaxParkedPerStream() const {
    return (read_ahead_bytes - 1) / kReadAheadMinChargeBytes + 1;
  }
};
std::vector<StagerMode> StagerModes() {
  return {{0, 1, CopyStores::kAuto, 0}, {3, 1}, {3, 3 * kReadAheadMinChargeBytes, CopyStores::kCached}};
}

void ApplyStagerMode(const StagerMode& mode, Options& o) {
  o.pipeline.stager_threads = mode.stagers;
  o.pipeline.acknowledger_threads = mode.stagers == 0 ? 0 : 2;
  o.pipeline.flush_threads = mode.flush_threads;
  o.pipeline.stage_inline_below_bytes = 0;
  o.pipeline.stream_read_ahead_bytes = mode.read_ahead_bytes;
  o.pipeline.staging_stores = mode.stores;
}

TEST_P(IngestServiceTest, MessagesLargerThanAStagingBufferAreSplitAndExact) {
  for (const StagerMode& mode : StagerModes()) {
    SCOPED_TRACE(::testing::Message() << mode.stagers << " stager threads, read-ahead " << mode.read_ahead_bytes << " bytes");
    Options o = DefaultOptions();
    o.pipeline.staging_buffers = 2;
    o.pipeline.staging_buffer_bytes = 4096;  // 1024 indices per buffer
    ApplyStagerMode(mode, o);
    StartServer(o);
    const uint64_t seed = TestSeed();
    SCOPED_TRACE(::testing::Message() << "seed " << seed);
    std::mt19937_64 rng(seed);
    const uint32_t rows = 50, cols = 50;
    ASSERT_TRUE(Create("big", rows, cols, 255).ok());
    ReferenceHistogram ref(rows, cols, 255);
    std::vector<v1::IngestRequest> msgs;
    for (size_t n :
         {size_t{10000}, size_t{1024}, size_t{1023}, size_t{1025}, size_t{3}, size_t{7777}}) {
      std::vector<uint32_t> idx = RandomIndices(rng, n, rows * cols);
      ref.Add(idx);
      msgs.push_back(IndexMessage(msgs.size() + 1, "big", idx));
    }
    // A large message whose last sample is out of range: checked whole before any part is
    // applied, so nothing of it lands.
    std::vector<uint32_t> bad = RandomIndices(rng, 5000, rows * cols);
    bad.back() = rows * cols;
    msgs.push_back(IndexMessage(99, "big", bad));
    msgs.push_back(IndexMessage(100, "big", {0}));
    ref.Add({0});
    StreamOutcome out = IngestAll(msgs);
    ASSERT_TRUE(out.status.ok());
    ASSERT_EQ(out.acks.size(), msgs.size());
    for (size_t i = 0; i + 2 < msgs.size(); ++i) EXPECT_EQ(out.acks[i].code(), 0) << i;
    EXPECT_EQ(out.acks[msgs.size() - 2].code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(out.acks[msgs.size() - 2].message().find("sample 4999"), std::string::npos)
        << out.acks[msgs.size() - 2].message();
    EXPECT_EQ(out.acks.back().code(), 0);
    EXPECT_EQ(QueryWhole("big").data, ref.Bytes());
  }
}

// A stager's on_staged may come after its message's ack is written and the client has
// half-closed, racing the stream's Finish on another thread: the reactor must not be touched
// once it can be finished (UBSan caught a member call on a deleted reactor here). Many short
// streams, each ending right after one message split across both staging buffers.
TEST_P(IngestServiceTest, ShortStreamsOfSplitMessagesEndCleanlyAndExact) {
  Options o = DefaultOptions();
  o.pipeline.staging_buffers = 2;
  o.pipeline.staging_buffer_bytes = 4096;
  ApplyStagerMode({3, 1}, o);
  StartServer(o);
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  const uint32_t rows = 40, cols = 40;
  ASSERT_TRUE(Create("short", rows, cols, 255).ok());
  constexpr int kThreads = 4, kStreamsPerThread = 25;
  std::vector<std::vector<uint32_t>> sent(kThreads);
  std::vector<std::thread> threads;
  std::atomic<int> bad_streams{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(seed + t);
      for (int i = 0; i < kStreamsPerThread; ++i) {
        std::vector<uint32_t> idx = RandomIndices(rng, 1500, rows * cols);  // 6000 bytes
        StreamOutcome out = IngestAll({IndexMessage(1, "short", idx)});
        if (!out.status.ok() || out.acks.size() != 1 || out.acks[0].code() != 0) {
          bad_streams.fetch_add(1);
          continue;
        }
        sent[t].insert(sent[t].end(), idx.begin(), idx.end());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(bad_streams.load(), 0);
  ReferenceHistogram ref(rows, cols, 255);
  for (const auto& s : sent) ref.Add(s);
  EXPECT_EQ(QueryWhole("short").data, ref.Bytes());
}

TEST_P(IngestServiceTest, BackpressureWithFewSmallBuffersLosesNothing) {
  for (const StagerMode& mode : StagerModes()) {
    SCOPED_TRACE(::testing::Message() << mode.stagers << " stager threads, read-ahead " << mode.read_ahead_bytes << " bytes");
    Options o = DefaultOptions();
    o.pipeline.staging_buffers = 2;
    o.pipeline.staging_buffer_bytes = 4096;
    o.pipeline.flush_deadline = absl::Microseconds(200);
    ApplyStagerMode(mode, o);
    StartServer(o);
    const uint32_t rows = 32, cols = 32;
    ASSERT_TRUE(Create("bp", rows, cols, 255).ok());
    constexpr int kStreams = 6, kMessages = 200;
    std::vector<std::vector<v1::IngestRequest>> per_stream(kStreams);
    ReferenceHistogram ref(rows, cols, 255);
    for (int s = 0; s < kStreams; ++s) {
      for (int m = 0; m < kMessages; ++m) {
        std::vector<uint32_t> idx(300 + (m % 7) * 100);  // 1200..3600 bytes: rarely two per buffer
        for (size_t i = 0; i < idx.size(); ++i) idx[i] = (s * 131 + m * 17 + i * 7) % (rows * cols);
        ref.Add(idx);
        per_stream[s].push_back(IndexMessage(m + 1, "bp", idx));
      }
    }
    std::vector<StreamOutcome> outcomes(kStreams);
    std::vector<std::thread> producers;
    for (int s = 0; s < kStreams; ++s) {
      producers.emplace_back([&, s] { outcomes[s] = IngestAll(per_stream[s]); });
    }
    std::atomic<bool> done{false};
    uint64_t max_in_flight = 0;
    std::thread watcher([&] {
      while (!done.load()) {
        v1::ServerStats stats;
        grpc::ClientContext ctx;
        if (histograms_->GetServerStats(&ctx, {}, &stats).ok()) {
          max_in_flight = std::max(max_in_flight, stats.staging_buffers_in_flight());
          EXPECT_LE(stats.queued_messages(),  // read-ahead parked per producer at most
                    uint64_t{kStreams} * mode.MaxParkedPerStream());
        }
        absl::SleepFor(absl::Milliseconds(1));
      }
    });
    for (auto& t : producers) t.join();
    done = true;
    watcher.join();
    EXPECT_LE(max_in_flight, 2u);
    for (int s = 0; s < kStreams; ++s) {
      ASSERT_TRUE(outcomes[s].status.ok());
      ASSERT_EQ(outcomes[s].acks.size(), size_t{kMessages});
      for (const auto& a : outcomes[s].acks) ASSERT_EQ(a.code(), 0) << a.message();
    }
    EXPECT_EQ(QueryWhole("bp").data, ref.Bytes());
  }
}

TEST_P(IngestServiceTest, QueryAfterAckSeesIt) {
  // A long flush deadline: only the acknowledgement path makes data visible, and the ack
  // must not come before the data is applied.
  Options o = DefaultOptions();
  o.pipeline.flush_deadline = absl::Milliseconds(20);
  StartServer(o);
  ASSERT_TRUE(Create("ryw", 16, 16).ok());
  grpc::ClientContext ctx;
  auto stream = ingest_->Ingest(&ctx);
  uint64_t expected = 0;
  for (int i = 0; i < 30; ++i) {
    std::vector<uint32_t> idx(i + 1, static_cast<uint32_t>(i));
    ASSERT_TRUE(stream->Write(IndexMessage(i + 1, "ryw", idx)));
    v1::IngestResponse ack;
    ASSERT_TRUE(stream->Read(&ack));
    ASSERT_EQ(ack.sequence(), uint64_t(i + 1));
    ASSERT_EQ(ack.code(), 0);
    expected += i + 1;
    const QueryOutcome q = QueryWhole("ryw");
    ASSERT_TRUE(q.status.ok());
    ASSERT_EQ(static_cast<uint8_t>(q.data[i]), i + 1) << "message " << i + 1;
    ASSERT_EQ(Info("ryw").total_count(), expected);
  }
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

TEST_P(IngestServiceTest, ClientDisconnectMidStreamKeepsServerAndAckedData) {
  const uint32_t n_messages = 400;
  ASSERT_TRUE(Create("cut", 1, n_messages).ok());
  // Message i puts i % 50 + 1 samples in bin i: each bin shows whether its message landed.
  auto count = [](uint32_t i) { return i % 50 + 1; };
  std::vector<uint64_t> acked;
  {
    grpc::ClientContext ctx;
    auto stream = ingest_->Ingest(&ctx);
    std::thread reader([&] {
      v1::IngestResponse ack;
      while (stream->Read(&ack)) {
        if (ack.code() == 0) acked.push_back(ack.sequence());
        if (acked.size() == 20) ctx.TryCancel();  // vanish mid-stream
      }
    });
    for (uint32_t i = 0; i < n_messages; ++i) {
      if (!stream->Write(IndexMessage(i + 1, "cut", std::vector<uint32_t>(count(i), i)))) break;
    }
    reader.join();
    const grpc::Status s = stream->Finish();
    EXPECT_EQ(s.error_code(), grpc::StatusCode::CANCELLED) << s.error_message();
  }
  ASSERT_GE(acked.size(), 20u);
  // The server keeps serving: a new stream works, and every acknowledged message is there.
  ASSERT_EQ(IngestOne(IndexMessage(1, "cut", {0})).code(), 0);
  const QueryOutcome q = QueryWhole("cut");
  ASSERT_TRUE(q.status.ok());
  for (uint64_t seq : acked) {
    const uint32_t i = seq - 1;
    EXPECT_EQ(static_cast<uint8_t>(q.data[i]), count(i) + (i == 0 ? 1 : 0)) << "acked message " << seq;
  }
  // Any other message landed whole or not at all.
  for (uint32_t i = 1; i < n_messages; ++i) {
    const uint8_t v = static_cast<uint8_t>(q.data[i]);
    EXPECT_TRUE(v == 0 || v == count(i)) << "bin " << i << " = " << int(v);
  }
  EXPECT_TRUE(WaitUntil([&] {
    v1::ServerStats stats;
    grpc::ClientContext c;
    return histograms_->GetServerStats(&c, {}, &stats).ok() && stats.active_streams() == 0;
  }));
}

TEST_P(IngestServiceTest, DeleteWhileIngestingIsSafe) {
  ASSERT_TRUE(Create("victim", 32, 32).ok());
  std::vector<v1::IngestRequest> msgs;
  for (int i = 0; i < 300; ++i) msgs.push_back(IndexMessage(i + 1, "victim", std::vector<uint32_t>(500, i % 1024)));
  StreamOutcome out;
  std::thread producer([&] { out = IngestAll(msgs); });
  absl::SleepFor(absl::Milliseconds(5));
  grpc::ClientContext ctx;
  v1::DeleteHistogramRequest del;
  del.set_name("victim");
  v1::DeleteHistogramResponse ignored;
  EXPECT_TRUE(histograms_->DeleteHistogram(&ctx, del, &ignored).ok());
  producer.join();
  ASSERT_TRUE(out.status.ok());
  ASSERT_EQ(out.acks.size(), msgs.size());
  bool seen_not_found = false;
  for (const auto& a : out.acks) {
    // Once NOT_FOUND, always NOT_FOUND: the name is gone for every later message.
    if (seen_not_found) {
      EXPECT_EQ(a.code(), grpc::StatusCode::NOT_FOUND);
    }
    EXPECT_TRUE(a.code() == 0 || a.code() == grpc::StatusCode::NOT_FOUND) << a.message();
    seen_not_found |= a.code() == grpc::StatusCode::NOT_FOUND;
  }
  EXPECT_TRUE(Create("after", 2, 2).ok());  // still serving
}

// Over twice the limit gRPC itself refuses the message (up to twice it, the message gets
// its own RESOURCE_EXHAUSTED: HardeningTest): only that stream ends.
TEST_P(IngestServiceTest, MessageOverTwiceMaxMessageBytesEndsOnlyThatStream) {
  Options o = DefaultOptions();
  o.limits.max_message_bytes = 64 << 10;
  StartServer(o);
  ASSERT_TRUE(Create("lim", 4, 4).ok());
  StreamOutcome out = IngestAll({IndexMessage(1, "lim", {1, 2}),
                                 IndexMessage(2, "lim", std::vector<uint32_t>(40000, 3))});
  EXPECT_EQ(out.status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
      << out.status.error_message();
  // The first message was acknowledged or not; if acknowledged, it is applied. The big one
  // never lands. The server keeps serving.
  ASSERT_LE(out.acks.size(), 1u);
  const uint64_t total = Info("lim").total_count();
  if (out.acks.size() == 1) {
    EXPECT_EQ(out.acks[0].code(), 0);
    EXPECT_EQ(total, 2u);
  } else {
    EXPECT_TRUE(total == 0 || total == 2) << total;
  }
  EXPECT_EQ(QueryWhole("lim").data[3], 0);
  EXPECT_EQ(IngestOne(IndexMessage(3, "lim", std::vector<uint32_t>(1000, 5))).code(), 0);
  EXPECT_EQ(static_cast<uint8_t>(QueryWhole("lim").data[5]), 255);
}

TEST_P(IngestServiceTest, StreamsOverTheLimitAreResourceExhausted) {
  Options o = DefaultOptions();
  o.limits.max_concurrent_streams = 2;
  StartServer(o);
  ASSERT_TRUE(Create("s", 2, 2).ok());
  grpc::ClientContext c1, c2, c3;
  auto s1 = ingest_->Ingest(&c1);
  auto s2 = ingest_->Ingest(&c2);
  v1::IngestResponse ack;
  ASSERT_TRUE(s1->Write(IndexMessage(1, "s", {0})));
  ASSERT_TRUE(s1->Read(&ack));  // both streams are open on the server now
  ASSERT_TRUE(s2->Write(IndexMessage(1, "s", {1})));
  ASSERT_TRUE(s2->Read(&ack));
  auto s3 = ingest_->Ingest(&c3);
  s3->Write(IndexMessage(1, "s", {2}));
  EXPECT_FALSE(s3->Read(&ack));
  const grpc::Status refused = s3->Finish();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << refused.error_message();
  s1->WritesDone();
  EXPECT_TRUE(s1->Finish().ok());
  // With one closed, a new stream is accepted (after the server saw the close).
  bool accepted = WaitUntil([&] {
    StreamOutcome out = IngestAll({IndexMessage(1, "s", {3})});
    return out.status.ok() && out.acks.size() == 1 && out.acks[0].code() == 0;
  });
  EXPECT_TRUE(accepted);
  s2->WritesDone();
  EXPECT_TRUE(s2->Finish().ok());
  EXPECT_EQ(QueryWhole("s").data, std::string("\x01\x01\x00\x01", 4));
}

}  // namespace
}  // namespace histd::server::testing
