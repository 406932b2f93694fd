// histd.v1.Query Render and Watch through real gRPC on every engine: the pooled view a Watch
// sends against a reference computed from the whole histogram's bins, updates only on
// change, the limits (interval floor, size cap, concurrent queries), the end at shutdown, when
// the client stops reading and once the histogram is deleted, and Render's PNG and error codes.
#include <atomic>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/server/grpc/service_fixture.h"

namespace histd::server::testing {
namespace {

// The pooled view of `bins` (rows x cols) cut into out_rows x out_cols cells by the API's
// rule, cell i covering [floor(i R / n), floor((i + 1) R / n)): scattered bin by bin.
std::vector<uint32_t> PooledReference(const std::string& bins, uint32_t rows, uint32_t cols,
                                      uint32_t out_rows, uint32_t out_cols, bool max) {
  std::vector<uint32_t> out(uint64_t{out_rows} * out_cols, 0);
  for (uint64_t r = 0; r < rows; ++r) {
    const uint64_t i = ((r + 1) * out_rows - 1) / rows;
    for (uint64_t c = 0; c < cols; ++c) {
      const uint64_t j = ((c + 1) * out_cols - 1) / cols;
      const uint32_t bin = static_cast<uint8_t>(bins[r * cols + c]);
      uint32_t& cell = out[i * out_cols + j];
      cell = max ? std::max(cell, bin) : cell + bin;
    }
  }
  return out;
}

std::vector<uint32_t> Cells(const v1::WatchUpdate& u) {
  std::vector<uint32_t> cells(u.rows() * u.cols());
  for (size_t i = 0; i < cells.size(); ++i) {
    if (u.dtype() == v1::DTYPE_U8) {
      cells[i] = static_cast<uint8_t>(u.data()[i]);
    } else {
      std::memcpy(&cells[i], u.data().data() + 4 * i, 4);
    }
  }
  return cells;
}

// A Watch stream read on its own thread, so a test can wait for updates with a timeout.
class WatchReader {
 public:
  WatchReader(v1::Query::Stub& stub, const v1::WatchRequest& request) {
    reader_ = stub.Watch(&context_, request);
    thread_ = std::thread([this] {
      v1::WatchUpdate update;
      while (reader_->Read(&update)) {
        absl::MutexLock lock(&mu_);
        updates_.push_back(update);
      }
      grpc::Status status = reader_->Finish();
      absl::MutexLock lock(&mu_);
      status_ = status;
      ended_ = true;
    });
  }
  ~WatchReader() {
    context_.TryCancel();
    thread_.join();
  }
  size_t count() {
    absl::MutexLock lock(&mu_);
    return updates_.size();
  }
  v1::WatchUpdate update(size_t i) {
    absl::MutexLock lock(&mu_);
    return updates_.at(i);
  }
  bool ended() {
    absl::MutexLock lock(&mu_);
    return ended_;
  }
  grpc::Status status() {
    absl::MutexLock lock(&mu_);
    return status_;
  }

 private:
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReader<v1::WatchUpdate>> reader_;
  std::thread thread_;
  absl::Mutex mu_;
  std::vector<v1::WatchUpdate> updates_ ABSL_GUARDED_BY(mu_);
  grpc::Status status_ ABSL_GUARDED_BY(mu_);
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
};

class WatchRenderTest : public ServiceTest {
 protected:
  // Adds `indices` and waits for the acknowledgement (visible to reads from then on).
  void Add(const std::string& name, const std::vector<uint32_t>& indices) {
    ASSERT_EQ(IngestOne(IndexMessage(1, name, indices)).code(), 0);
  }

  v1::WatchRequest Request(const std::string& name, uint32_t rows, uint32_t cols,
                           uint32_t interval_ms, v1::Pool pool = v1::POOL_SUM) {
    v1::WatchRequest r;
    r.set_name(name);
    r.set_rows(rows);
    r.set_cols(cols);
    r.set_interval_ms(interval_ms);
    r.set_pool(pool);
    return r;
  }
};
HISTD_INSTANTIATE_ENGINES(WatchRenderTest);

TEST_P(WatchRenderTest, SendsThePooledViewThenOnlyChanges) {
  ASSERT_TRUE(Create("w", 37, 301, 20).ok());
  std::mt19937_64 rng(TestSeed());
  std::vector<uint32_t> samples(5000);
  for (uint32_t& s : samples) s = rng() % (37 * 301);
  samples.push_back(36 * 301 + 300);  // the last bin
  Add("w", samples);
  WatchReader watch(*query_, Request("w", 10, 47, 100));
  ASSERT_TRUE(WaitUntil([&] { return watch.count() >= 1; })) << watch.status().error_message();
  v1::WatchUpdate first = watch.update(0);
  EXPECT_EQ(first.sequence(), 1u);
  EXPECT_EQ(first.dtype(), v1::DTYPE_U32);
  EXPECT_EQ(first.rows(), 10u);
  EXPECT_EQ(first.cols(), 47u);
  EXPECT_EQ(first.cap(), 20u);
  EXPECT_EQ(first.region().row_end(), 37u);
  EXPECT_EQ(first.region().col_end(), 301u);
  const std::string bins = QueryWhole("w").data;
  EXPECT_EQ(Cells(first), PooledReference(bins, 37, 301, 10, 47, false));

  // Unchanged: nothing more for several intervals.
  absl::SleepFor(absl::Milliseconds(500));
  EXPECT_EQ(watch.count(), 1u);

  // A change: the next update has it.
  Add("w", {0, 0, 0});
  ASSERT_TRUE(WaitUntil([&] { return watch.count() >= 2; }));
  v1::WatchUpdate second = watch.update(1);
  EXPECT_EQ(second.sequence(), 2u);
  EXPECT_EQ(Cells(second), PooledReference(QueryWhole("w").data, 37, 301, 10, 47, false));
  EXPECT_NE(Cells(second), Cells(first));
}

TEST_P(WatchRenderTest, MaxPoolingAndAViewNoLargerThanTheRegion) {
  ASSERT_TRUE(Create("m", 16, 64, 3).ok());
  Add("m", {5, 5, 5, 5, 700});
  v1::WatchRequest request = Request("m", 100, 100, 100, v1::POOL_MAX);  // more than the bins
  request.mutable_region()->set_row_begin(0);
  request.mutable_region()->set_row_end(12);
  request.mutable_region()->set_col_begin(1);
  request.mutable_region()->set_col_end(64);
  WatchReader watch(*query_, request);
  ASSERT_TRUE(WaitUntil([&] { return watch.count() >= 1; })) << watch.status().error_message();
  const v1::WatchUpdate u = watch.update(0);
  EXPECT_EQ(u.dtype(), v1::DTYPE_U8);
  EXPECT_EQ(u.rows(), 12u);
  EXPECT_EQ(u.cols(), 63u);
  const std::vector<uint32_t> cells = Cells(u);
  EXPECT_EQ(cells[0 * 63 + 4], 3u);    // bin 5 saturated at cap 3
  EXPECT_EQ(cells[10 * 63 + 59], 1u);  // bin 700 = row 10, col 60
}

TEST_P(WatchRenderTest, LimitsAreChecked) {
  ASSERT_TRUE(Create("l", 8, 8).ok());
  {
    WatchReader watch(*query_, Request("l", 4, 4, 10));  // below --min_watch_interval
    ASSERT_TRUE(WaitUntil([&] { return watch.ended(); }));
    EXPECT_EQ(watch.status().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(watch.status().error_message().find("min_watch_interval"), std::string::npos);
  }
  {
    WatchReader watch(*query_, Request("l", 5000, 4, 100));  // above --max_render_pixels
    ASSERT_TRUE(WaitUntil([&] { return watch.ended(); }));
    EXPECT_EQ(watch.status().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  }
  {
    WatchReader watch(*query_, Request("nope", 4, 4, 100));
    ASSERT_TRUE(WaitUntil([&] { return watch.ended(); }));
    EXPECT_EQ(watch.status().error_code(), grpc::StatusCode::NOT_FOUND);
  }
}

TEST_P(WatchRenderTest, AWatchHoldsAQueryPermitUntilItEnds) {
  Options options = DefaultOptions();
  options.limits.max_concurrent_queries = 1;
  StartServer(options);
  ASSERT_TRUE(Create("q", 8, 8).ok());
  auto watch = std::make_unique<WatchReader>(*query_, Request("q", 4, 4, 100));
  ASSERT_TRUE(WaitUntil([&] { return watch->count() >= 1; }));
  EXPECT_EQ(QueryWhole("q").status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  watch.reset();  // cancels
  EXPECT_TRUE(WaitUntil([&] { return QueryWhole("q").status.ok(); }));
}

// Regression (found by histd_fuzz_watch): a watch held its histogram, so once it was deleted
// (or deleted and created again under the same name) the watch went on reading the old bins
// forever, and their memory stayed charged, instead of ending NOT_FOUND.
TEST_P(WatchRenderTest, EndsNotFoundOnceTheHistogramIsDeleted) {
  for (const bool recreate : {false, true}) {
    SCOPED_TRACE(recreate ? "deleted and created again" : "deleted");
    ASSERT_TRUE(Create("d", 8, 8).ok());
    WatchReader watch(*query_, Request("d", 4, 4, 100));
    ASSERT_TRUE(WaitUntil([&] { return watch.count() >= 1; })) << watch.status().error_message();
    grpc::ClientContext ctx;
    v1::DeleteHistogramRequest request;
    request.set_name("d");
    v1::DeleteHistogramResponse response;
    ASSERT_TRUE(histograms_->DeleteHistogram(&ctx, request, &response).ok());
    if (recreate) ASSERT_TRUE(Create("d", 8, 8).ok());
    ASSERT_TRUE(WaitUntil([&] { return watch.ended(); }));
    EXPECT_EQ(watch.status().error_code(), grpc::StatusCode::NOT_FOUND)
        << watch.status().error_message();
    EXPECT_EQ(watch.count(), 1u);
    if (recreate) {
      grpc::ClientContext delete_ctx;
      ASSERT_TRUE(histograms_->DeleteHistogram(&delete_ctx, request, &response).ok());
    }
  }
}

TEST_P(WatchRenderTest, ShutdownEndsWatchesUnavailableWithoutWaitingOutTheGrace) {
  ASSERT_TRUE(Create("s", 8, 8).ok());
  WatchReader watch(*query_, Request("s", 4, 4, 100));
  ASSERT_TRUE(WaitUntil([&] { return watch.count() >= 1; }));
  const absl::Time begin = absl::Now();
  server_->Shutdown(absl::Seconds(20));
  EXPECT_LT(absl::Now() - begin, absl::Seconds(5));
  ASSERT_TRUE(WaitUntil([&] { return watch.ended(); }));
  EXPECT_EQ(watch.status().error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_P(WatchRenderTest, AClientThatStopsReadingIsCancelledAfterTheStallTimeout) {
  Options options = DefaultOptions();
  options.limits.max_concurrent_queries = 1;
  options.render.watch_stall_timeout = absl::Milliseconds(300);
  StartServer(options);
  ASSERT_TRUE(Create("big", 1024, 1024).ok());
  // The histogram changes every few milliseconds, so every read makes a 4 MiB update; the
  // client below never reads one, so gRPC's flow control stops the writes.
  std::atomic<bool> stop{false};
  std::thread producer([&] {
    uint32_t i = 0;
    while (!stop.load()) {
      IngestOne(IndexMessage(1, "big", {i++ % (1024 * 1024)}));
      absl::SleepFor(absl::Milliseconds(5));
    }
  });
  grpc::ClientContext context;
  std::unique_ptr<grpc::ClientReader<v1::WatchUpdate>> reader =
      query_->Watch(&context, Request("big", 1024, 1024, 100));
  // One update read proves the watch holds the permit (a query racing its start could hold
  // it instead and have the watch refused); no other update is read.
  v1::WatchUpdate first;
  ASSERT_TRUE(reader->Read(&first));
  // The permit is held while the stream lives, then freed once the stall is detected.
  EXPECT_TRUE(WaitUntil([&] { return QueryWhole("big").status.error_code() ==
                                     grpc::StatusCode::RESOURCE_EXHAUSTED; }, absl::Seconds(5)));
  EXPECT_TRUE(WaitUntil([&] { return QueryWhole("big").status.ok(); }, absl::Seconds(20)));
  stop.store(true);
  producer.join();
  context.TryCancel();
  v1::WatchUpdate u;
  while (reader->Read(&u)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
}

TEST_P(WatchRenderTest, RenderReturnsAPngOfTheRequestedSize) {
  ASSERT_TRUE(Create("r", 64, 256).ok());
  Add("r", {100, 200, 300});
  v1::RenderRequest request;
  request.set_name("r");
  request.set_width(300);
  request.set_height(70);
  request.set_bare(true);
  v1::RenderResponse response;
  grpc::ClientContext context;
  ASSERT_TRUE(query_->Render(&context, request, &response).ok());
  EXPECT_EQ(response.png().substr(1, 3), "PNG");
  EXPECT_EQ(response.width(), 300u);
  EXPECT_EQ(response.height(), 70u);
  EXPECT_EQ(response.zmax(), 1);
  EXPECT_EQ(response.region().row_end(), 64u);

  request.set_bare(false);
  grpc::ClientContext framed;
  ASSERT_TRUE(query_->Render(&framed, request, &response).ok());
  EXPECT_GT(response.width(), 300u);
  EXPECT_GT(response.height(), 70u);

  const std::pair<std::function<void(v1::RenderRequest*)>, grpc::StatusCode> bad[] = {
      {[](v1::RenderRequest* r) { r->set_name("nope"); }, grpc::StatusCode::NOT_FOUND},
      {[](v1::RenderRequest* r) { r->set_width(5000); }, grpc::StatusCode::INVALID_ARGUMENT},
      {[](v1::RenderRequest* r) { r->set_scale(v1::SCALE_LOG); r->set_zmin(0); },
       grpc::StatusCode::INVALID_ARGUMENT},
      {[](v1::RenderRequest* r) { r->set_zmin(3); r->set_zmax(2); }, grpc::StatusCode::INVALID_ARGUMENT},
      {[](v1::RenderRequest* r) { r->mutable_region()->set_row_end(65); r->mutable_region()->set_col_end(1); },
       grpc::StatusCode::INVALID_ARGUMENT},
      {[](v1::RenderRequest* r) { r->set_pool(static_cast<v1::Pool>(9)); }, grpc::StatusCode::INVALID_ARGUMENT},
  };
  for (const auto& [change, code] : bad) {
    v1::RenderRequest r = request;
    change(&r);
    grpc::ClientContext c;
    EXPECT_EQ(query_->Render(&c, r, &response).error_code(), code) << r.ShortDebugString();
  }
}

}  // namespace
}  // namespace histd::server::testing
