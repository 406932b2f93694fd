// Snapshots (server/core/snapshot.h) through a real daemon: histograms, counters and bins
// survive a restart exactly; a missing file starts empty; a damaged file stops the start
// with DATA_LOSS naming the problem; periodic snapshots appear while serving. Plus CRC-32C
// against its check value.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/util/delimited_message_util.h"
#include "histd/v1/snapshot.pb.h"
#include "server/core/crc32c.h"
#include "tests/server/grpc/service_fixture.h"

namespace histd::server::testing {
namespace {

TEST(Crc32cTest, MatchesTheCheckValueInOneCallOrMany) {
  const std::string check = "123456789";
  const auto* p = reinterpret_cast<const uint8_t*>(check.data());
  EXPECT_EQ(Crc32c(p, check.size()), 0xE3069283u);
  EXPECT_EQ(Crc32c(p + 4, 5, Crc32c(p, 4)), 0xE3069283u);
  EXPECT_EQ(Crc32c(p, 0), 0u);
  // Lengths around the 8-byte steps, against byte-at-a-time continuation.
  std::mt19937 rng(7);
  std::vector<uint8_t> data(1000);
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  for (size_t n : {1, 7, 8, 9, 63, 64, 65, 1000}) {
    uint32_t piecewise = 0;
    for (size_t i = 0; i < n; ++i) piecewise = Crc32c(data.data() + i, 1, piecewise);
    EXPECT_EQ(Crc32c(data.data(), n), piecewise) << n;
  }
}

class SnapshotTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    char dir[] = "/tmp/histd_snapshot_XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    path_ = dir_ + "/histograms.snapshot";
  }
  void TearDown() override {
    ServiceTest::TearDown();
    std::remove(path_.c_str());
    std::remove((path_ + ".tmp").c_str());
    rmdir(dir_.c_str());
  }
  Options WithSnapshot() const {
    Options o = DefaultOptions();
    o.snapshot.path = path_;
    return o;
  }
  std::vector<v1::HistogramInfo> List() {
    v1::ListHistogramsResponse list;
    grpc::ClientContext ctx;
    EXPECT_TRUE(histograms_->ListHistograms(&ctx, {}, &list).ok());
    return {list.histograms().begin(), list.histograms().end()};
  }
  std::string ReadFile() const {
    std::ifstream in(path_, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  void WriteFile(const std::string& bytes) const {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out << bytes;
  }
  // Fills three histograms (saturating bins, axes with outflow, a 1 x N shape), stops the
  // daemon (which writes the snapshot) and returns what they held.
  std::vector<std::pair<v1::HistogramInfo, std::string>> FillAndStop() {
    StartServer(WithSnapshot());
    std::mt19937_64 rng(TestSeed());
    EXPECT_TRUE(Create("saturating", 7, 13, 3).ok());
    EXPECT_TRUE(Create("row", 1, 1000, 255).ok());
    v1::HistogramSpec xy;
    xy.set_name("xy.axes");
    xy.set_rows(16);
    xy.set_cols(32);
    xy.set_cap(200);
    xy.mutable_x_axis()->set_lo(-1.0f);
    xy.mutable_x_axis()->set_hi(1.0f);
    xy.mutable_y_axis()->set_lo(0.0f);
    xy.mutable_y_axis()->set_hi(4.0f);
    EXPECT_TRUE(CreateSpec(xy).ok());
    std::vector<v1::IngestRequest> msgs;
    for (int m = 0; m < 5; ++m) {
      std::vector<uint32_t> a(500), b(300);
      for (auto& x : a) x = static_cast<uint32_t>(rng() % (7 * 13));
      for (auto& x : b) x = static_cast<uint32_t>(rng() % 1000);
      msgs.push_back(IndexMessage(3 * m + 1, "saturating", a));
      msgs.push_back(IndexMessage(3 * m + 2, "row", b));
      std::vector<std::pair<float, float>> pairs(200);
      std::uniform_real_distribution<float> x(-1.5f, 1.5f), y(-0.5f, 4.5f);
      for (auto& p : pairs) p = {x(rng), y(rng)};
      v1::IngestRequest r;
      r.set_sequence(3 * m + 3);
      r.set_histogram("xy.axes");
      r.set_type(v1::SAMPLE_TYPE_XY_F32);
      r.set_samples(PackXY(pairs));
      msgs.push_back(r);
    }
    msgs.push_back(IndexMessage(99, "row", {1000}));  // rejected: counted as rejected
    StreamOutcome out = IngestAll(msgs);
    EXPECT_TRUE(out.status.ok());
    std::vector<std::pair<v1::HistogramInfo, std::string>> held;
    for (const v1::HistogramInfo& info : List())
      held.push_back({info, QueryWhole(info.spec().name()).data});
    StopServer();
    return held;
  }

  // A copy of the current file restores `histograms` histograms on a second daemon, while
  // the first one still runs.
  void ExpectRestoresOnAnotherDaemon(size_t histograms) {
    const std::string copy = dir_ + "/copy.snapshot";
    {
      std::ofstream out(copy, std::ios::binary);
      out << ReadFile();
    }
    Options other = DefaultOptions();
    other.snapshot.path = copy;
    absl::StatusOr<std::unique_ptr<HistdServer>> second = HistdServer::Start(other);
    ASSERT_TRUE(second.ok()) << second.status();
    auto stub = v1::Histograms::NewStub(
        grpc::CreateChannel((*second)->address(), grpc::InsecureChannelCredentials()));
    v1::ListHistogramsResponse list;
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub->ListHistograms(&ctx, {}, &list).ok());
    EXPECT_EQ(static_cast<size_t>(list.histograms_size()), histograms);
    (*second)->Shutdown(absl::ZeroDuration());
    second->reset();
    std::remove(copy.c_str());
  }

  std::string dir_, path_;
};
HISTD_INSTANTIATE_ENGINES(SnapshotTest);

TEST_P(SnapshotTest, HistogramsCountersAndBinsSurviveARestartExactly) {
  const auto held = FillAndStop();
  ASSERT_EQ(held.size(), 3u);
  EXPECT_GT(held[0].first.samples_rejected() + held[1].first.samples_rejected() +
                held[2].first.samples_rejected(), 0u);
  ASSERT_FALSE(ReadFile().empty());
  StartServer(WithSnapshot());
  const std::vector<v1::HistogramInfo> now = List();
  ASSERT_EQ(now.size(), held.size());
  for (size_t i = 0; i < held.size(); ++i) {
    SCOPED_TRACE(held[i].first.spec().name());
    // Every field of the info: spec, counters, sums, device.
    EXPECT_EQ(now[i].SerializeAsString(), held[i].first.SerializeAsString())
        << now[i].DebugString() << " vs " << held[i].first.DebugString();
    EXPECT_EQ(QueryWhole(now[i].spec().name()).data, held[i].second);
  }
  // The restored histograms keep counting (List is in name order: "row" first).
  ASSERT_EQ(held[0].first.spec().name(), "row");
  ASSERT_EQ(IngestOne(IndexMessage(1, "row", {5, 5})).code(), 0);
  EXPECT_EQ(Info("row").samples_applied(), held[0].first.samples_applied() + 2);
  // And the next shutdown's snapshot has that too.
  StopServer();
  StartServer(WithSnapshot());
  ASSERT_EQ(List().size(), 3u);
  EXPECT_EQ(Info("row").samples_applied(), held[0].first.samples_applied() + 2);
}

TEST_P(SnapshotTest, NoFileStartsEmptyAndAnEmptyDaemonWritesAnEmptySnapshot) {
  StartServer(WithSnapshot());
  EXPECT_TRUE(List().empty());
  StopServer();
  EXPECT_FALSE(ReadFile().empty());  // a header declaring no histograms
  StartServer(WithSnapshot());
  EXPECT_TRUE(List().empty());
}

TEST_P(SnapshotTest, DamagedFilesStopTheStartWithDataLoss) {
  FillAndStop();
  const std::string good = ReadFile();
  ASSERT_GT(good.size(), 1000u);
  struct Damage {
    std::string what;
    std::string bytes;
  };
  std::string flipped = good;
  flipped[good.size() - 40] ^= 0x01;  // inside the last histogram's bins or checksum
  const std::vector<Damage> damages = {
      {"empty", ""},
      {"not a snapshot", "hello, world"},
      {"truncated", good.substr(0, good.size() / 2)},
      {"one bit flipped", flipped},
      {"trailing bytes", good + "x"},
  };
  for (const Damage& d : damages) {
    SCOPED_TRACE(d.what);
    WriteFile(d.bytes);
    absl::StatusOr<std::unique_ptr<HistdServer>> s = HistdServer::Start(WithSnapshot());
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss) << s.status();
    EXPECT_NE(s.status().message().find(path_), std::string::npos) << s.status();
  }
  // The intact file still restores.
  WriteFile(good);
  StartServer(WithSnapshot());
  EXPECT_EQ(List().size(), 3u);
}

// Random damage anywhere in the file: the start either fails with DATA_LOSS or (damage in
// informational header fields) restores exactly what was saved; never anything else.
TEST_P(SnapshotTest, RandomDamageIsDetectedOrHarmless) {
  const auto held = FillAndStop();
  const std::string good = ReadFile();
  std::mt19937_64 rng(TestSeed());
  int refused = 0, harmless = 0;
  for (int trial = 0; trial < 120; ++trial) {
    std::string bad = good;
    const size_t at = rng() % bad.size();
    switch (trial % 4) {
      case 0: bad[at] = static_cast<char>(bad[at] ^ (1u << (rng() % 8))); break;
      case 1: bad[at] = static_cast<char>(rng()); break;
      case 2: bad.resize(at); break;
      default: bad.insert(bad.begin() + at, static_cast<char>(rng())); break;
    }
    if (bad == good) continue;
    SCOPED_TRACE(::testing::Message() << "trial " << trial << " at byte " << at << " of " << good.size());
    WriteFile(bad);
    absl::StatusOr<std::unique_ptr<HistdServer>> s = HistdServer::Start(WithSnapshot());
    if (!s.ok()) {
      ASSERT_EQ(s.status().code(), absl::StatusCode::kDataLoss) << s.status();
      ++refused;
      continue;
    }
    (*s)->Shutdown(absl::ZeroDuration());  // (rewrites the file; the next trial replaces it)
    s->reset();
    StartServer(WithSnapshot());
    const std::vector<v1::HistogramInfo> now = List();
    ASSERT_EQ(now.size(), held.size());
    for (size_t i = 0; i < held.size(); ++i) {
      ASSERT_EQ(now[i].SerializeAsString(), held[i].first.SerializeAsString());
      ASSERT_EQ(QueryWhole(now[i].spec().name()).data, held[i].second);
    }
    StopServer();
    ++harmless;
  }
  EXPECT_GT(refused, 60);  // the header is a few dozen bytes of the file
  RecordProperty("harmless", harmless);
}

TEST_P(SnapshotTest, ASnapshotOverThisDaemonsLimitsIsRefusedNamingTheHistogram) {
  FillAndStop();
  Options o = WithSnapshot();
  o.limits.max_bins_per_histogram = 500;  // "row" has 1000 bins
  absl::StatusOr<std::unique_ptr<HistdServer>> s = HistdServer::Start(o);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kResourceExhausted) << s.status();
  EXPECT_NE(s.status().message().find("'row'"), std::string::npos) << s.status();
}

// Regression (snapshot fuzz target): a histogram whose checksum and sums are intact but
// whose spec no daemon accepts (an empty axis, a bad name) is damage: DATA_LOSS, not the
// store's INVALID_ARGUMENT.
TEST_P(SnapshotTest, AnIntactChecksumOverAnInvalidSpecIsDataLoss) {
  const auto file_with = [](const v1::HistogramSpec& spec) {
    v1::HistogramInfo info;
    *info.mutable_spec() = spec;
    v1::HistogramSnapshot h;
    h.set_info(info.SerializeAsString());
    h.set_bins(std::string(uint64_t{spec.rows()} * spec.cols(), '\0'));
    const auto* p = reinterpret_cast<const uint8_t*>(h.info().data());
    h.set_crc32c(Crc32c(reinterpret_cast<const uint8_t*>(h.bins().data()), h.bins().size(),
                        Crc32c(p, h.info().size())));
    v1::SnapshotHeader header;
    header.set_format("histd.v1.snapshot");
    header.set_histograms(1);
    std::string out;
    google::protobuf::io::StringOutputStream stream(&out);
    EXPECT_TRUE(google::protobuf::util::SerializeDelimitedToZeroCopyStream(header, &stream));
    EXPECT_TRUE(google::protobuf::util::SerializeDelimitedToZeroCopyStream(h, &stream));
    return out;
  };
  v1::HistogramSpec empty_axis;
  empty_axis.set_name("xy");
  empty_axis.set_rows(2);
  empty_axis.set_cols(2);
  empty_axis.set_cap(255);
  empty_axis.mutable_x_axis()->set_lo(0.0f);
  empty_axis.mutable_x_axis()->set_hi(-4.0f);
  empty_axis.mutable_y_axis()->set_hi(1.0f);
  v1::HistogramSpec bad_name = empty_axis;
  bad_name.set_name("a b");
  bad_name.clear_x_axis();
  bad_name.clear_y_axis();
  for (const v1::HistogramSpec& spec : {empty_axis, bad_name}) {
    SCOPED_TRACE(spec.ShortDebugString());
    WriteFile(file_with(spec));
    absl::StatusOr<std::unique_ptr<HistdServer>> s = HistdServer::Start(WithSnapshot());
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.status().code(), absl::StatusCode::kDataLoss) << s.status();
  }
}

TEST_P(SnapshotTest, PeriodicSnapshotsAppearWhileServing) {
  Options o = WithSnapshot();
  o.snapshot.interval = absl::Milliseconds(20);
  StartServer(o);
  ASSERT_TRUE(Create("live", 4, 4).ok());
  ASSERT_EQ(IngestOne(IndexMessage(1, "live", {1, 2, 3})).code(), 0);
  // A snapshot written after the acknowledgement holds the histogram.
  EXPECT_TRUE(WaitUntil([&] { return ReadFile().find("live") != std::string::npos; }));
  ExpectRestoresOnAnotherDaemon(1);
}

TEST_P(SnapshotTest, WriteSnapshotRpcWritesNowAndNeedsAPath) {
  StartServer(WithSnapshot());
  ASSERT_TRUE(Create("now", 3, 5).ok());
  ASSERT_EQ(IngestOne(IndexMessage(1, "now", {0, 14, 14})).code(), 0);
  v1::WriteSnapshotResponse written;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(histograms_->WriteSnapshot(&ctx, {}, &written).ok());
  }
  EXPECT_EQ(written.path(), path_);
  EXPECT_EQ(written.histograms(), 1u);
  EXPECT_EQ(written.bin_bytes(), 15u);
  EXPECT_GE(written.seconds(), 0.0);
  ExpectRestoresOnAnotherDaemon(1);
  // A daemon without a snapshot path says how to get one.
  StartServer(DefaultOptions());
  grpc::ClientContext ctx;
  const grpc::Status none = histograms_->WriteSnapshot(&ctx, {}, &written);
  EXPECT_EQ(none.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(none.error_message().find("--snapshot_path"), std::string::npos) << none.error_message();
}

TEST_P(SnapshotTest, BadSnapshotOptionsAreRefused) {
  Options o = DefaultOptions();
  o.snapshot.interval = absl::Seconds(1);  // no path
  EXPECT_EQ(HistdServer::Start(o).status().code(), absl::StatusCode::kInvalidArgument);
  o.snapshot.path = path_;
  o.snapshot.interval = -absl::Seconds(1);
  EXPECT_EQ(HistdServer::Start(o).status().code(), absl::StatusCode::kInvalidArgument);
  o = DefaultOptions();
  o.snapshot.path = dir_ + "/no/such/dir/snapshot";  // could never be written
  EXPECT_EQ(HistdServer::Start(o).status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace histd::server::testing
