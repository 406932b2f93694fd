// Histograms service through real gRPC: lifecycle, info counters, merge, stats, and every
// bad field with its exact status code.
#include <string>
#include <vector>

#include "tests/server/grpc/service_fixture.h"

namespace histd::server::testing {
namespace {

class HistogramsServiceTest : public ServiceTest {};
HISTD_INSTANTIATE_ENGINES(HistogramsServiceTest);

TEST_P(HistogramsServiceTest, CreateReturnsInfoWithSpecAndZeroCounters) {
  v1::HistogramSpec spec;
  spec.set_name("Run.42_a-b");
  spec.set_rows(3);
  spec.set_cols(5);
  spec.set_cap(7);
  spec.mutable_x_axis()->set_lo(-1.0f);
  spec.mutable_x_axis()->set_hi(4.0f);
  v1::HistogramInfo info;
  ASSERT_TRUE(CreateSpec(spec, &info).ok());
  EXPECT_EQ(info.spec().name(), "Run.42_a-b");
  EXPECT_EQ(info.spec().rows(), 3u);
  EXPECT_EQ(info.spec().cols(), 5u);
  EXPECT_EQ(info.spec().cap(), 7u);
  EXPECT_TRUE(info.spec().has_x_axis());
  EXPECT_FALSE(info.spec().has_y_axis());
  EXPECT_FLOAT_EQ(info.spec().x_axis().lo(), -1.0f);
  EXPECT_FLOAT_EQ(info.spec().x_axis().hi(), 4.0f);
  EXPECT_EQ(info.samples_applied(), 0u);
  EXPECT_EQ(info.total_count(), 0u);
  EXPECT_EQ(info.saturated_bins(), 0u);
  EXPECT_GE(info.bytes_used(), 15u);
  EXPECT_EQ(info.device(), GetParam() == "cuda" ? info.device() : std::string("cpu"));

  const v1::HistogramInfo again = Info("Run.42_a-b");
  EXPECT_EQ(again.spec().SerializeAsString(), info.spec().SerializeAsString());
}

TEST_P(HistogramsServiceTest, BadSpecsGetExactCodes) {
  struct Case {
    std::string what;
    std::string name;
    uint32_t rows, cols, cap;
    grpc::StatusCode code;
  };
  const std::vector<Case> cases = {
      {"empty name", "", 4, 4, 255, grpc::StatusCode::INVALID_ARGUMENT},
      {"space in name", "a b", 4, 4, 255, grpc::StatusCode::INVALID_ARGUMENT},
      {"slash in name", "a/b", 4, 4, 255, grpc::StatusCode::INVALID_ARGUMENT},
      {"non-ascii name", "caf\xc3\xa9", 4, 4, 255, grpc::StatusCode::INVALID_ARGUMENT},
      {"129-char name", std::string(129, 'n'), 4, 4, 255, grpc::StatusCode::INVALID_ARGUMENT},
      {"zero rows", "z", 0, 4, 255, grpc::StatusCode::INVALID_ARGUMENT},
      {"zero cols", "z", 4, 0, 255, grpc::StatusCode::INVALID_ARGUMENT},
      {"65536 x 65536 over the bin limit", "huge", 65536, 65536, 255,
       grpc::StatusCode::RESOURCE_EXHAUSTED},
      {"max x max", "huge", 0xffffffffu, 0xffffffffu, 255, grpc::StatusCode::RESOURCE_EXHAUSTED},
      {"cap 256", "c", 4, 4, 256, grpc::StatusCode::INVALID_ARGUMENT},
  };
  for (const Case& c : cases) {
    grpc::Status s = Create(c.name, c.rows, c.cols, c.cap);
    EXPECT_EQ(s.error_code(), c.code) << c.what << ": " << s.error_message();
    EXPECT_FALSE(s.error_message().empty()) << c.what;
  }
  // Nothing was created by any of them.
  v1::ListHistogramsResponse list;
  grpc::ClientContext ctx;
  ASSERT_TRUE(histograms_->ListHistograms(&ctx, {}, &list).ok());
  EXPECT_EQ(list.histograms_size(), 0);
  // The edges that are fine: a 128-char name, cap 1 and 255, a 1 x 1 histogram.
  EXPECT_TRUE(Create(std::string(128, 'n'), 1, 1, 1).ok());
  EXPECT_TRUE(Create("cap255", 2, 3, 255).ok());
}

// Regression (issue 31, 6): proto3 cannot send an unset cap but as 0, which means 255.
TEST_P(HistogramsServiceTest, UnsetCapMeans255) {
  v1::HistogramSpec spec;
  spec.set_name("nocap");
  spec.set_rows(2);
  spec.set_cols(3);
  v1::HistogramInfo info;
  ASSERT_TRUE(CreateSpec(spec, &info).ok());
  EXPECT_EQ(info.spec().cap(), 255u);
  EXPECT_EQ(Info("nocap").spec().cap(), 255u);
  ASSERT_EQ(IngestOne(IndexMessage(1, "nocap", std::vector<uint32_t>(300, 4))).code(), 0);
  EXPECT_EQ(Info("nocap").saturated_bins(), 1u);
  EXPECT_EQ(Info("nocap").total_count(), 255u);
}

TEST_P(HistogramsServiceTest, BadAxesAreInvalidArgument) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<std::pair<float, float>> bad = {{1, 1}, {2, 1}, {nan, 1}, {0, inf}, {-inf, 0}};
  for (bool y : {false, true}) {
    for (auto [lo, hi] : bad) {
      v1::HistogramSpec spec;
      spec.set_name("axes");
      spec.set_rows(4);
      spec.set_cols(4);
      spec.set_cap(9);
      v1::Axis* axis = y ? spec.mutable_y_axis() : spec.mutable_x_axis();
      axis->set_lo(lo);
      axis->set_hi(hi);
      grpc::Status s = CreateSpec(spec);
      EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
          << (y ? "y" : "x") << " [" << lo << ", " << hi << "): " << s.error_message();
    }
  }
}

TEST_P(HistogramsServiceTest, DuplicateNameIsAlreadyExists) {
  ASSERT_TRUE(Create("dup", 2, 2).ok());
  grpc::Status s = Create("dup", 3, 3);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::ALREADY_EXISTS) << s.error_message();
  EXPECT_EQ(Info("dup").spec().rows(), 2u);  // the first one is untouched
}

TEST_P(HistogramsServiceTest, LimitsAreResourceExhausted) {
  Options o = DefaultOptions();
  o.limits.max_histograms = 3;
  o.limits.max_bins_per_histogram = 1000;
  StartServer(o);
  EXPECT_TRUE(Create("exact", 40, 25).ok());  // 1000 bins: at the limit
  grpc::Status s = Create("over", 1, 1001);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_TRUE(Create("b", 1, 1).ok());
  EXPECT_TRUE(Create("c", 1, 1).ok());
  s = Create("d", 1, 1);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  // Deleting one makes room again.
  grpc::ClientContext ctx;
  v1::DeleteHistogramRequest del;
  del.set_name("b");
  v1::DeleteHistogramResponse ignored;
  ASSERT_TRUE(histograms_->DeleteHistogram(&ctx, del, &ignored).ok());
  EXPECT_TRUE(Create("d", 1, 1).ok());
}

TEST_P(HistogramsServiceTest, DeleteThenUnknownIsNotFound) {
  ASSERT_TRUE(Create("gone", 4, 4).ok());
  auto del = [&](const std::string& name) {
    grpc::ClientContext ctx;
    v1::DeleteHistogramRequest req;
    req.set_name(name);
    v1::DeleteHistogramResponse resp;
    return histograms_->DeleteHistogram(&ctx, req, &resp);
  };
  EXPECT_TRUE(del("gone").ok());
  EXPECT_EQ(del("gone").error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(del("never").error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(del("").error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  grpc::ClientContext ctx;
  v1::GetHistogramInfoRequest req;
  req.set_name("gone");
  v1::HistogramInfo info;
  EXPECT_EQ(histograms_->GetHistogramInfo(&ctx, req, &info).error_code(),
            grpc::StatusCode::NOT_FOUND);
  // The name can be reused, with a new shape and empty bins.
  ASSERT_TRUE(Create("gone", 2, 8).ok());
  EXPECT_EQ(Info("gone").total_count(), 0u);
  EXPECT_EQ(Info("gone").spec().cols(), 8u);
}

TEST_P(HistogramsServiceTest, ListIsSortedAndCarriesCounts) {
  ASSERT_TRUE(Create("b", 2, 2).ok());
  ASSERT_TRUE(Create("a", 3, 3).ok());
  ASSERT_TRUE(Create("c", 1, 4).ok());
  ASSERT_EQ(IngestOne(IndexMessage(1, "a", {0, 0, 8})).code(), 0);
  v1::ListHistogramsResponse list;
  grpc::ClientContext ctx;
  ASSERT_TRUE(histograms_->ListHistograms(&ctx, {}, &list).ok());
  ASSERT_EQ(list.histograms_size(), 3);
  EXPECT_EQ(list.histograms(0).spec().name(), "a");
  EXPECT_EQ(list.histograms(1).spec().name(), "b");
  EXPECT_EQ(list.histograms(2).spec().name(), "c");
  EXPECT_EQ(list.histograms(0).samples_applied(), 3u);
  EXPECT_EQ(list.histograms(0).messages_applied(), 1u);
  EXPECT_EQ(list.histograms(0).total_count(), 3u);
  EXPECT_EQ(list.histograms(1).total_count(), 0u);
}

TEST_P(HistogramsServiceTest, InfoCountsSaturationAndRejections) {
  ASSERT_TRUE(Create("sat", 2, 3, /*cap=*/2).ok());
  // Bin 4 gets 5 hits (reads 2 = cap), bin 0 one hit.
  ASSERT_EQ(IngestOne(IndexMessage(1, "sat", {4, 4, 4, 0, 4, 4})).code(), 0);
  ASSERT_EQ(IngestOne(IndexMessage(2, "sat", {1, 6})).code(), grpc::StatusCode::INVALID_ARGUMENT);
  const v1::HistogramInfo info = Info("sat");
  EXPECT_EQ(info.samples_applied(), 6u);  // a saturated bin still counts the hit
  EXPECT_EQ(info.messages_applied(), 1u);
  EXPECT_EQ(info.samples_rejected(), 2u);
  EXPECT_EQ(info.messages_rejected(), 1u);
  EXPECT_EQ(info.saturated_bins(), 1u);
  EXPECT_EQ(info.total_count(), 3u);
}

TEST_P(HistogramsServiceTest, ResetZeroesBinsAndCountersKeepsSpec) {
  ASSERT_TRUE(Create("r", 4, 4, 3).ok());
  ASSERT_EQ(IngestOne(IndexMessage(1, "r", {1, 2, 3, 15})).code(), 0);
  grpc::ClientContext ctx;
  v1::ResetHistogramRequest req;
  req.set_name("r");
  v1::HistogramInfo info;
  ASSERT_TRUE(histograms_->ResetHistogram(&ctx, req, &info).ok());
  EXPECT_EQ(info.total_count(), 0u);
  EXPECT_EQ(info.samples_applied(), 0u);
  EXPECT_EQ(info.messages_applied(), 0u);
  EXPECT_EQ(info.spec().cap(), 3u);
  EXPECT_EQ(QueryWhole("r").data, std::string(16, '\0'));
  // Ingest works after a reset.
  ASSERT_EQ(IngestOne(IndexMessage(2, "r", {5})).code(), 0);
  EXPECT_EQ(Info("r").total_count(), 1u);

  grpc::ClientContext ctx2;
  req.set_name("nope");
  EXPECT_EQ(histograms_->ResetHistogram(&ctx2, req, &info).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_P(HistogramsServiceTest, MergeAddsSaturatingAtTargetCap) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  const uint32_t rows = 7, cols = 13;
  ASSERT_TRUE(Create("src", rows, cols, 200).ok());
  ASSERT_TRUE(Create("dst", rows, cols, 5).ok());
  ReferenceHistogram src(rows, cols, 200), dst(rows, cols, 5);
  std::uniform_int_distribution<uint32_t> bin(0, rows * cols - 1);
  std::vector<uint32_t> a(400), b(300);
  for (auto& v : a) v = bin(rng);
  for (auto& v : b) v = bin(rng);
  ASSERT_EQ(IngestOne(IndexMessage(1, "src", a)).code(), 0);
  ASSERT_EQ(IngestOne(IndexMessage(2, "dst", b)).code(), 0);
  src.Add(a);
  dst.Add(b);

  v1::MergeHistogramRequest req;
  req.set_source("src");
  req.set_target("dst");
  v1::HistogramInfo info;
  grpc::ClientContext ctx;
  ASSERT_TRUE(histograms_->MergeHistogram(&ctx, req, &info).ok());
  std::string expected(rows * cols, '\0');
  uint64_t total = 0;
  for (uint32_t i = 0; i < rows * cols; ++i) {
    const uint32_t v = std::min<uint32_t>(5, uint32_t{src.Bin(i)} + dst.Bin(i));
    expected[i] = static_cast<char>(v);
    total += v;
  }
  EXPECT_EQ(info.spec().name(), "dst");
  EXPECT_EQ(info.total_count(), total);
  EXPECT_EQ(QueryWhole("dst").data, expected);
  EXPECT_EQ(QueryWhole("src").data, src.Bytes());  // the source is unchanged
}

TEST_P(HistogramsServiceTest, MergeErrors) {
  ASSERT_TRUE(Create("a", 4, 6).ok());
  ASSERT_TRUE(Create("b", 6, 4).ok());  // same bin count, different shape
  auto merge = [&](const std::string& s, const std::string& t) {
    v1::MergeHistogramRequest req;
    req.set_source(s);
    req.set_target(t);
    v1::HistogramInfo info;
    grpc::ClientContext ctx;
    return histograms_->MergeHistogram(&ctx, req, &info);
  };
  EXPECT_EQ(merge("a", "b").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(merge("a", "zz").error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(merge("zz", "a").error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(merge("", "a").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

// Regression (issue 31, 5): a histogram is never merged into itself (it used to double).
TEST_P(HistogramsServiceTest, MergeIntoItselfIsInvalidArgument) {
  ASSERT_TRUE(Create("a", 4, 6).ok());
  ASSERT_EQ(IngestOne(IndexMessage(1, "a", {0, 1, 1})).code(), 0);
  v1::MergeHistogramRequest req;
  req.set_source("a");
  req.set_target("a");
  v1::HistogramInfo info;
  grpc::ClientContext ctx;
  grpc::Status s = histograms_->MergeHistogram(&ctx, req, &info);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("into itself"), std::string::npos) << s.error_message();
  EXPECT_EQ(Info("a").total_count(), 3u);  // unchanged
}

TEST_P(HistogramsServiceTest, ServerStatsCountIngest) {
  ASSERT_TRUE(Create("s1", 8, 8).ok());
  ASSERT_TRUE(Create("s2", 2, 2).ok());
  std::vector<v1::IngestRequest> msgs;
  for (int i = 0; i < 10; ++i) msgs.push_back(IndexMessage(i + 1, "s1", std::vector<uint32_t>(50, i)));
  StreamOutcome out = IngestAll(msgs);
  ASSERT_TRUE(out.status.ok());
  v1::ServerStats stats;
  grpc::ClientContext ctx;
  ASSERT_TRUE(histograms_->GetServerStats(&ctx, {}, &stats).ok());
  EXPECT_FALSE(stats.engine().empty());
  EXPECT_EQ(stats.histograms(), 2u);
  EXPECT_GE(stats.bytes_used(), 68u);
  EXPECT_EQ(stats.messages(), 10u);
  EXPECT_EQ(stats.samples(), 500u);
  EXPECT_EQ(stats.bytes(), 2000u);
  EXPECT_GE(stats.batches(), 1u);
  EXPECT_LE(stats.batches(), 10u);
  EXPECT_EQ(stats.staging_buffers(), static_cast<uint64_t>(DefaultOptions().pipeline.staging_buffers));
  EXPECT_EQ(stats.staging_buffers_in_flight(), 0u);
  EXPECT_EQ(stats.queued_messages(), 0u);
  EXPECT_GE(stats.uptime_seconds(), 0.0);
  // Ten messages were copied into staging (small ones inline: no stager wait).
  EXPECT_GT(stats.stage_seconds(), 0.0);
  EXPECT_GE(stats.stage_wait_seconds(), 0.0);
  EXPECT_GT(stats.apply_seconds(), 0.0);
  // The stream's OnDone may run just after the client saw its status.
  EXPECT_TRUE(WaitUntil([&] {
    v1::ServerStats now;
    grpc::ClientContext c;
    return histograms_->GetServerStats(&c, {}, &now).ok() && now.active_streams() == 0;
  }));
}

// Every finished Query stream is counted, failed ones included, and its time split adds up.
TEST_P(HistogramsServiceTest, ServerStatsCountQueriesAndSplitTheirTime) {
  auto stats_now = [&] {
    v1::ServerStats stats;
    grpc::ClientContext ctx;
    EXPECT_TRUE(histograms_->GetServerStats(&ctx, {}, &stats).ok());
    return stats;
  };
  const v1::ServerStats before = stats_now();
  EXPECT_EQ(before.queries(), 0u);
  EXPECT_EQ(before.query_seconds(), 0.0);
  ASSERT_TRUE(Create("q", 64, 64).ok());
  ASSERT_EQ(IngestOne(IndexMessage(1, "q", {0, 5, 4095})).code(), 0);
  v1::QueryRequest chunked;
  chunked.set_name("q");
  chunked.set_max_chunk_bytes(1000);  // 5 chunks of one band
  const QueryOutcome whole = Query(chunked);
  ASSERT_TRUE(whole.status.ok()) << whole.status.error_message();
  EXPECT_EQ(whole.chunks, 5u);
  EXPECT_EQ(QueryWhole("missing").status.error_code(), grpc::StatusCode::NOT_FOUND);
  // The server records a query just before its final status reaches the client.
  ASSERT_TRUE(WaitUntil([&] { return stats_now().queries() == 2; }));
  const v1::ServerStats after = stats_now();
  EXPECT_GT(after.query_seconds(), 0.0);
  EXPECT_GT(after.query_read_seconds(), 0.0);    // one band read
  EXPECT_GT(after.query_write_seconds(), 0.0);   // five chunks written
  EXPECT_GE(after.query_worker_wait_seconds(), 0.0);
  EXPECT_LE(after.query_read_seconds() + after.query_write_seconds() + after.query_worker_wait_seconds(),
            after.query_seconds() * (1 + 1e-9));
}

}  // namespace
}  // namespace histd::server::testing
