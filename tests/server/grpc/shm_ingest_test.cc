// Zero-copy local ingest (docs/shm-ingest.md) through real gRPC streams and real POSIX
// shared-memory objects: registration and its checks, ingest by reference against a plain
// reference and against the same samples sent as payloads, every bad reference, region reuse
// after acknowledgement (raw and through client::ShmRing), unregistration and stream ends
// with messages in flight, a cancelled producer, the opt-in and the Unix socket transport.
// On the CPU engine the samples are read in place; on the CUDA engine through staging.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "client/histd_client.h"
#include "client/ingest_stream.h"
#include "client/shm_ring.h"
#include "tests/server/grpc/service_fixture.h"

namespace histd::server::testing {
namespace {

// A POSIX shared-memory object made by the test, mapped read-write, unlinked at the end.
class ShmObject {
 public:
  ShmObject(size_t bytes, mode_t mode = 0600) : bytes_(bytes) {
    static std::atomic<int> counter{0};
    key_ = "/histd-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
    const int fd = shm_open(key_.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    EXPECT_GE(fd, 0) << strerror(errno);
    EXPECT_EQ(fchmod(fd, mode), 0);  // past the umask
    EXPECT_EQ(ftruncate(fd, static_cast<off_t>(bytes)), 0);
    fd_ = fd;
    data_ = static_cast<uint8_t*>(
        mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    EXPECT_NE(data_, MAP_FAILED);
  }
  ~ShmObject() {
    munmap(data_, bytes_);
    close(fd_);
    shm_unlink(key_.c_str());
  }
  const std::string& key() const { return key_; }
  uint8_t* data() { return data_; }
  int fd() const { return fd_; }
  void Put(size_t offset, const std::string& bytes) {
    std::memcpy(data_ + offset, bytes.data(), bytes.size());
  }

 private:
  std::string key_;
  size_t bytes_;
  int fd_ = -1;
  uint8_t* data_ = nullptr;
};

v1::IngestRequest Register(uint64_t sequence, const std::string& region, const std::string& key,
                           uint64_t bytes) {
  v1::IngestRequest r;
  r.set_sequence(sequence);
  r.mutable_register_shm()->set_region(region);
  r.mutable_register_shm()->set_key(key);
  r.mutable_register_shm()->set_byte_size(bytes);
  return r;
}

v1::IngestRequest Unregister(uint64_t sequence, const std::string& region) {
  v1::IngestRequest r;
  r.set_sequence(sequence);
  r.set_unregister_shm(region);
  return r;
}

v1::IngestRequest ShmMessage(uint64_t sequence, const std::string& histogram,
                             const std::string& region, uint64_t offset, uint64_t count,
                             v1::SampleType type = v1::SAMPLE_TYPE_BIN_INDEX_U32) {
  v1::IngestRequest r;
  r.set_sequence(sequence);
  r.set_histogram(histogram);
  r.set_type(type);
  r.mutable_shm()->set_region(region);
  r.mutable_shm()->set_offset(offset);
  r.mutable_shm()->set_count(count);
  return r;
}

std::vector<uint32_t> RandomIndices(std::mt19937_64& rng, size_t n, uint32_t bins) {
  std::uniform_int_distribution<uint32_t> d(0, bins - 1);
  std::vector<uint32_t> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// One ingest stream driven step by step: write, then read acks in order.
class Stream {
 public:
  explicit Stream(v1::Ingest::Stub* stub) : stream_(stub->Ingest(&ctx_)) {}
  ~Stream() {
    if (!finished_) {
      ctx_.TryCancel();
      stream_->Finish();
    }
  }
  bool Write(const v1::IngestRequest& r) { return stream_->Write(r); }
  v1::IngestResponse Read() {
    v1::IngestResponse r;
    EXPECT_TRUE(stream_->Read(&r));
    return r;
  }
  // Writes and reads its ack.
  v1::IngestResponse Call(const v1::IngestRequest& r) {
    EXPECT_TRUE(Write(r));
    v1::IngestResponse ack = Read();
    EXPECT_EQ(ack.sequence(), r.sequence());
    return ack;
  }
  grpc::Status Finish() {
    stream_->WritesDone();
    v1::IngestResponse ignored;
    while (stream_->Read(&ignored)) {
    }
    finished_ = true;
    return stream_->Finish();
  }
  void Cancel() { ctx_.TryCancel(); }

 private:
  grpc::ClientContext ctx_;
  std::unique_ptr<grpc::ClientReaderWriter<v1::IngestRequest, v1::IngestResponse>> stream_;
  bool finished_ = false;
};

class ShmIngestTest : public ServiceTest {
 protected:
  void SetUp() override {
    if (GetParam() == "cuda" && !CudaEngineAvailable()) {
      GTEST_SKIP() << "no CUDA engine in this build or no GPU visible";
    }
    if (std::getenv("HISTD_TEST_LOG") == nullptr) SetLogLevel(LogLevel::kOff);
    StartServer(ShmOptions());
  }
  Options ShmOptions() const {
    Options o = DefaultOptions();
    o.shm_ingest.allow = true;
    o.pipeline.staging_buffer_bytes = 1 << 20;
    o.pipeline.staging_buffers = 4;
    return o;
  }
  uint64_t HostMemoryUsed() {
    v1::ServerStats stats;
    grpc::ClientContext ctx;
    EXPECT_TRUE(histograms_->GetServerStats(&ctx, v1::GetServerStatsRequest(), &stats).ok());
    return stats.memory_used_bytes();
  }
};

TEST_P(ShmIngestTest, IndicesByReferenceMatchTheReference) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  ASSERT_TRUE(Create("h", 37, 129, 7).ok());  // not a multiple of any tile; a low cap
  ReferenceHistogram ref(37, 129, 7);
  ShmObject shm(1 << 20);
  Stream s(ingest_.get());
  v1::IngestResponse reg = s.Call(Register(1, "r", shm.key(), 1 << 20));
  ASSERT_EQ(reg.code(), 0) << reg.message();
  EXPECT_EQ(reg.samples(), 0u);
  // Sizes 1, 0, odd, the whole region's last sample.
  const std::vector<std::pair<size_t, size_t>> parts = {
      {0, 1}, {4, 0}, {8, 4097}, {40000, 30000}, {(1 << 20) - 4, 1}};
  uint64_t seq = 2;
  for (auto [offset, count] : parts) {
    std::vector<uint32_t> v = RandomIndices(rng, count, 37 * 129);
    if (offset == (1 << 20) - 4) v = {37 * 129 - 1};  // the last bin
    shm.Put(offset, PackU32(v));
    ref.Add(v);
    v1::IngestResponse ack = s.Call(ShmMessage(seq++, "h", "r", offset, count));
    EXPECT_EQ(ack.code(), 0) << ack.message();
    EXPECT_EQ(ack.samples(), count);
  }
  EXPECT_TRUE(s.Finish().ok());
  QueryOutcome q = QueryWhole("h");
  ASSERT_TRUE(q.status.ok());
  EXPECT_EQ(q.data, ref.Bytes());
  const v1::HistogramInfo info = Info("h");
  EXPECT_EQ(info.messages_applied(), parts.size());
  EXPECT_EQ(info.samples_applied(), 1u + 4097 + 30000 + 1);
}

TEST_P(ShmIngestTest, CoordinatesByReferenceMatchThePayloadPath) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  v1::HistogramSpec spec;
  spec.set_rows(50);
  spec.set_cols(70);
  spec.mutable_x_axis()->set_lo(-1.5f);
  spec.mutable_x_axis()->set_hi(2.0f);
  spec.mutable_y_axis()->set_lo(0.0f);
  spec.mutable_y_axis()->set_hi(10.0f);
  spec.set_name("by_ref");
  ASSERT_TRUE(CreateSpec(spec).ok());
  spec.set_name("by_payload");
  ASSERT_TRUE(CreateSpec(spec).ok());
  std::normal_distribution<float> x(0.2f, 1.2f), y(5.0f, 3.0f);
  std::vector<std::pair<float, float>> xy(20000);
  for (auto& p : xy) p = {x(rng), y(rng)};
  const float inf = std::numeric_limits<float>::infinity();
  xy[0] = {std::nanf(""), 1.0f};
  xy[1] = {-inf, std::nanf("")};
  xy[2] = {2.0f, 10.0f};  // both at hi: overflow
  xy[3] = {-1.5f, 0.0f};  // both at lo: the first bin
  ShmObject shm(xy.size() * 8);
  shm.Put(0, PackXY(xy));
  Stream s(ingest_.get());
  ASSERT_EQ(s.Call(Register(1, "xy", shm.key(), xy.size() * 8)).code(), 0);
  v1::IngestResponse ack = s.Call(ShmMessage(2, "by_ref", "xy", 0, xy.size(), v1::SAMPLE_TYPE_XY_F32));
  EXPECT_EQ(ack.code(), 0) << ack.message();
  v1::IngestRequest payload;
  payload.set_sequence(3);
  payload.set_histogram("by_payload");
  payload.set_type(v1::SAMPLE_TYPE_XY_F32);
  payload.set_samples(PackXY(xy));
  EXPECT_EQ(s.Call(payload).code(), 0);
  EXPECT_TRUE(s.Finish().ok());
  EXPECT_EQ(QueryWhole("by_ref").data, QueryWhole("by_payload").data);
  v1::HistogramInfo a = Info("by_ref"), b = Info("by_payload");
  a.clear_spec();
  b.clear_spec();
  EXPECT_EQ(a.samples_applied(), b.samples_applied());
  EXPECT_EQ(a.x_nan(), 1u);
  EXPECT_EQ(a.y_nan(), 1u);
  EXPECT_EQ(a.x_overflow(), b.x_overflow());
  EXPECT_EQ(a.x_underflow(), b.x_underflow());
  EXPECT_EQ(a.y_overflow(), b.y_overflow());
  EXPECT_EQ(a.samples_outside(), b.samples_outside());
  EXPECT_EQ(a.total_count(), b.total_count());
}

TEST_P(ShmIngestTest, EveryBadReferenceGetsItsOwnErrorAndNothingApplied) {
  ASSERT_TRUE(Create("h", 16, 16).ok());
  ASSERT_TRUE(Create("plain", 16, 16).ok());  // no axes
  ShmObject shm(4096);
  std::vector<uint32_t> good(1024, 5);
  shm.Put(0, PackU32(good));
  Stream s(ingest_.get());
  ASSERT_EQ(s.Call(Register(1, "r", shm.key(), 4096)).code(), 0);
  struct Case {
    const char* what;
    v1::IngestRequest request;
    grpc::StatusCode code;
  };
  v1::IngestRequest both = ShmMessage(0, "h", "r", 0, 4);
  both.set_samples(PackU32({1}));
  v1::IngestRequest no_type = ShmMessage(0, "h", "r", 0, 4);
  no_type.set_type(v1::SAMPLE_TYPE_UNSPECIFIED);
  v1::IngestRequest register_and_data = Register(0, "r2", shm.key(), 4096);
  register_and_data.set_histogram("h");
  std::vector<Case> cases = {
      {"unknown region", ShmMessage(0, "h", "nope", 0, 4), grpc::StatusCode::NOT_FOUND},
      {"misaligned offset", ShmMessage(0, "h", "r", 2, 4), grpc::StatusCode::INVALID_ARGUMENT},
      {"xy offset not a multiple of 8", ShmMessage(0, "plain", "r", 4, 1, v1::SAMPLE_TYPE_XY_F32),
       grpc::StatusCode::INVALID_ARGUMENT},
      {"past the end", ShmMessage(0, "h", "r", 4092, 2), grpc::StatusCode::OUT_OF_RANGE},
      {"offset past the end", ShmMessage(0, "h", "r", 8192, 0), grpc::StatusCode::OUT_OF_RANGE},
      {"count overflows", ShmMessage(0, "h", "r", 0, uint64_t{1} << 62),
       grpc::StatusCode::OUT_OF_RANGE},
      {"offset overflows", ShmMessage(0, "h", "r", ~uint64_t{3}, 1), grpc::StatusCode::OUT_OF_RANGE},
      {"samples and shm", both, grpc::StatusCode::INVALID_ARGUMENT},
      {"unknown type", no_type, grpc::StatusCode::INVALID_ARGUMENT},
      {"coordinates without axes", ShmMessage(0, "plain", "r", 0, 4, v1::SAMPLE_TYPE_XY_F32),
       grpc::StatusCode::FAILED_PRECONDITION},
      {"unknown histogram", ShmMessage(0, "nope", "r", 0, 4), grpc::StatusCode::NOT_FOUND},
      {"registration with data", register_and_data, grpc::StatusCode::INVALID_ARGUMENT},
      {"unregister unknown", Unregister(0, "nope"), grpc::StatusCode::NOT_FOUND},
  };
  uint64_t seq = 2;
  for (Case& c : cases) {
    c.request.set_sequence(seq++);
    v1::IngestResponse ack = s.Call(c.request);
    EXPECT_EQ(ack.code(), c.code) << c.what << ": " << ack.message();
    EXPECT_FALSE(ack.message().empty()) << c.what;
  }
  // A bad sample: the last of 1024 is out of range; nothing of the message is applied.
  std::vector<uint32_t> bad(1024, 3);
  bad.back() = 256;
  shm.Put(0, PackU32(bad));
  v1::IngestResponse ack = s.Call(ShmMessage(seq++, "h", "r", 0, 1024));
  EXPECT_EQ(ack.code(), grpc::StatusCode::INVALID_ARGUMENT) << ack.message();
  EXPECT_NE(ack.message().find("sample 1023"), std::string::npos) << ack.message();
  EXPECT_EQ(ack.samples(), 1024u);
  // The stream goes on: a good message after all of that.
  shm.Put(0, PackU32(good));
  EXPECT_EQ(s.Call(ShmMessage(seq++, "h", "r", 0, 1024)).code(), 0);
  EXPECT_TRUE(s.Finish().ok());
  const v1::HistogramInfo info = Info("h");
  EXPECT_EQ(info.total_count(), 255u);  // bin 5 saturated by the good message only
  EXPECT_EQ(info.samples_applied(), 1024u);
  EXPECT_EQ(info.samples_rejected(), 1024u);  // the bad sample's message
  EXPECT_EQ(Info("plain").total_count(), 0u);
}

TEST_P(ShmIngestTest, MessageLargerThanAStagingBufferIsRefused) {
  ASSERT_TRUE(Create("h", 16, 16).ok());
  const size_t bytes = (1 << 20) + 4096;
  ShmObject shm(bytes);
  Stream s(ingest_.get());
  ASSERT_EQ(s.Call(Register(1, "r", shm.key(), bytes)).code(), 0);
  v1::IngestResponse ack = s.Call(ShmMessage(2, "h", "r", 0, bytes / 4));
  EXPECT_EQ(ack.code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << ack.message();
  EXPECT_NE(ack.message().find("--staging_buffer_bytes"), std::string::npos);
  EXPECT_EQ(s.Call(ShmMessage(3, "h", "r", 0, (1 << 20) / 4)).code(), 0);
  EXPECT_TRUE(s.Finish().ok());
  EXPECT_EQ(Info("h").samples_applied(), (1u << 20) / 4);
}

TEST_P(ShmIngestTest, RegistrationChecks) {
  Stream s(ingest_.get());
  uint64_t seq = 1;
  auto code = [&](const v1::IngestRequest& r) {
    v1::IngestRequest q = r;
    q.set_sequence(seq++);
    v1::IngestResponse ack = s.Call(q);
    EXPECT_FALSE(ack.code() != 0 && ack.message().empty());
    return static_cast<grpc::StatusCode>(ack.code());
  };
  ShmObject ok(8192);
  EXPECT_EQ(code(Register(0, "r", "/histd-test-does-not-exist", 4096)), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(code(Register(0, "r", "no-slash", 4096)), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(code(Register(0, "r", "/a/b", 4096)), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(code(Register(0, "r", ok.key(), 0)), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(code(Register(0, "r", ok.key(), 8193)), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(code(Register(0, "bad name!", ok.key(), 4096)), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(code(Register(0, std::string(65, 'a'), ok.key(), 4096)),
            grpc::StatusCode::INVALID_ARGUMENT);
  ShmObject group_writable(4096, 0620), world_writable(4096, 0602), readable(4096, 0644);
  EXPECT_EQ(code(Register(0, "r", group_writable.key(), 4096)), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(code(Register(0, "r", world_writable.key(), 4096)), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(code(Register(0, "readable", readable.key(), 4096)), grpc::StatusCode::OK);
  if (geteuid() == 0) {  // only root can give an object away
    ShmObject foreign(4096);
    ASSERT_EQ(fchown(foreign.fd(), 65534, 65534), 0);
    EXPECT_EQ(code(Register(0, "r", foreign.key(), 4096)), grpc::StatusCode::PERMISSION_DENIED);
  }
  EXPECT_EQ(code(Register(0, "r", ok.key(), 8192)), grpc::StatusCode::OK);
  EXPECT_EQ(code(Register(0, "r", ok.key(), 8192)), grpc::StatusCode::ALREADY_EXISTS);
  // The same object under a second name is fine: regions are names on this stream.
  EXPECT_EQ(code(Register(0, "r2", ok.key(), 4096)), grpc::StatusCode::OK);
  EXPECT_EQ(code(Unregister(0, "r2")), grpc::StatusCode::OK);
  EXPECT_EQ(code(Unregister(0, "r2")), grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(s.Finish().ok());
}

TEST_P(ShmIngestTest, RegionsPerStreamAndMemoryBudgetAreBounded) {
  Options o = ShmOptions();
  o.shm_ingest.max_regions_per_stream = 2;
  StartServer(o);
  const uint64_t before = HostMemoryUsed();
  ShmObject a(4096), b(100);
  Stream s(ingest_.get());
  EXPECT_EQ(s.Call(Register(1, "a", a.key(), 4096)).code(), 0);
  EXPECT_EQ(s.Call(Register(2, "b", b.key(), 100)).code(), 0);
  EXPECT_EQ(HostMemoryUsed(), before + 4096 + 4096);  // whole pages
  EXPECT_EQ(s.Call(Register(3, "c", a.key(), 4096)).code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(s.Call(Unregister(4, "b")).code(), 0);
  EXPECT_EQ(HostMemoryUsed(), before + 4096);
  EXPECT_EQ(s.Call(Register(5, "c", a.key(), 4096)).code(), 0);
  EXPECT_TRUE(s.Finish().ok());
  EXPECT_TRUE(WaitUntil([&] { return HostMemoryUsed() == before; }));

  o.limits.max_memory_bytes = before + (64 << 10);
  StartServer(o);
  ShmObject big(1 << 20);  // sparse: nothing of it is touched
  Stream t(ingest_.get());
  v1::IngestResponse ack = t.Call(Register(1, "big", big.key(), 1 << 20));
  EXPECT_EQ(ack.code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << ack.message();
  EXPECT_NE(ack.message().find("--max_memory_bytes"), std::string::npos) << ack.message();
  EXPECT_EQ(t.Call(Register(2, "small", a.key(), 4096)).code(), 0);
  EXPECT_TRUE(t.Finish().ok());
}

TEST_P(ShmIngestTest, RegionReuseAfterAcknowledgement) {
  ASSERT_TRUE(Create("h", 8, 8).ok());
  ShmObject shm(4096);
  Stream s(ingest_.get());
  ASSERT_EQ(s.Call(Register(1, "r", shm.key(), 4096)).code(), 0);
  // The same 1024 samples' space, rewritten after each acknowledgement.
  ReferenceHistogram ref(8, 8, 255);
  for (uint32_t round = 0; round < 6; ++round) {
    std::vector<uint32_t> v(1024, round);
    v[0] = 63 - round;
    shm.Put(0, PackU32(v));
    ref.Add(v);
    ASSERT_EQ(s.Call(ShmMessage(2 + round, "h", "r", 0, v.size())).code(), 0);
  }
  EXPECT_TRUE(s.Finish().ok());
  EXPECT_EQ(QueryWhole("h").data, ref.Bytes());
}

TEST_P(ShmIngestTest, ClientRingReusesSpaceOnlyAfterAcks) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  ASSERT_TRUE(Create("h", 64, 333, 200).ok());
  ReferenceHistogram ref(64, 333, 200);
  auto c = std::make_unique<client::Client>(server_->address());
  client::IngestStreamOptions so;
  so.max_in_flight_messages = 8;
  std::unique_ptr<client::IngestStream> stream = c->OpenIngestStream(so);
  // A ring of 3.5 messages: it wraps and waits for acknowledgements all the time.
  absl::StatusOr<std::unique_ptr<client::ShmRing>> ring =
      client::ShmRing::Create(stream.get(), 14 * 4096);
  ASSERT_TRUE(ring.ok()) << ring.status();
  for (int i = 0; i < 60; ++i) {
    std::vector<uint32_t> v = RandomIndices(rng, 4096 - (i % 7) * 100, 64 * 333);
    ref.Add(v);
    ASSERT_TRUE((*ring)->Write("h", v1::SAMPLE_TYPE_BIN_INDEX_U32, PackU32(v)).ok());
  }
  client::IngestSummary summary = stream->Finish();
  EXPECT_TRUE(summary.OverallStatus().ok()) << summary.OverallStatus();
  EXPECT_EQ(summary.counters.messages_acked, 60u);
  EXPECT_EQ(QueryWhole("h").data, ref.Bytes());
}

TEST_P(ShmIngestTest, UnregisterWithMessagesInFlight) {
  ASSERT_TRUE(Create("h", 32, 32).ok());
  const uint64_t before = HostMemoryUsed();
  ReferenceHistogram ref(32, 32, 255);
  std::mt19937_64 rng(TestSeed());
  const size_t per = 50000;
  ShmObject shm(8 * per * 4);
  for (int i = 0; i < 8; ++i) {
    std::vector<uint32_t> v = RandomIndices(rng, per, 1024);
    ref.Add(v);
    shm.Put(i * per * 4, PackU32(v));
  }
  Stream s(ingest_.get());
  ASSERT_EQ(s.Call(Register(1, "r", shm.key(), 8 * per * 4)).code(), 0);
  // Eight references, then the unregistration, then one more reference: none waits.
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(s.Write(ShmMessage(2 + i, "h", "r", i * per * 4, per)));
  ASSERT_TRUE(s.Write(Unregister(10, "r")));
  ASSERT_TRUE(s.Write(ShmMessage(11, "h", "r", 0, per)));
  for (int i = 0; i < 8; ++i) {
    v1::IngestResponse ack = s.Read();
    EXPECT_EQ(ack.sequence(), 2u + i);
    EXPECT_EQ(ack.code(), 0) << ack.message();
  }
  EXPECT_EQ(s.Read().code(), 0);                          // unregistered
  EXPECT_EQ(s.Read().code(), grpc::StatusCode::NOT_FOUND);  // gone for new messages
  EXPECT_TRUE(s.Finish().ok());
  EXPECT_EQ(QueryWhole("h").data, ref.Bytes());
  EXPECT_TRUE(WaitUntil([&] { return HostMemoryUsed() == before; }))
      << HostMemoryUsed() << " vs " << before;  // the region's charge is gone
}

TEST_P(ShmIngestTest, RegionsBelongToTheirStreamAndGoWithIt) {
  ASSERT_TRUE(Create("h", 4, 4).ok());
  ShmObject shm(4096);
  shm.Put(0, PackU32({1, 2, 3}));
  const uint64_t before = HostMemoryUsed();
  Stream a(ingest_.get()), b(ingest_.get());
  ASSERT_EQ(a.Call(Register(1, "r", shm.key(), 4096)).code(), 0);
  EXPECT_EQ(b.Call(ShmMessage(1, "h", "r", 0, 3)).code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(a.Call(ShmMessage(2, "h", "r", 0, 3)).code(), 0);
  // Messages in flight when the stream half-closes are applied, then the region goes.
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(a.Write(ShmMessage(3 + i, "h", "r", 0, 3)));
  EXPECT_TRUE(a.Finish().ok());
  EXPECT_TRUE(WaitUntil([&] { return HostMemoryUsed() == before; }));
  EXPECT_EQ(Info("h").samples_applied(), 21u * 3);
  // A fresh stream may use the name again, for its own region.
  Stream c(ingest_.get());
  EXPECT_EQ(c.Call(ShmMessage(1, "h", "r", 0, 3)).code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(c.Call(Register(2, "r", shm.key(), 4096)).code(), 0);
  EXPECT_TRUE(c.Finish().ok());
  EXPECT_TRUE(b.Finish().ok());
}

TEST_P(ShmIngestTest, CancelledProducerLeavesTheDaemonHealthy) {
  ASSERT_TRUE(Create("h", 64, 64).ok());
  const uint64_t before = HostMemoryUsed();
  {
    ShmObject shm(1 << 20);
    std::vector<uint32_t> v(1 << 18, 7);
    shm.Put(0, PackU32(v));
    Stream s(ingest_.get());
    ASSERT_EQ(s.Call(Register(1, "r", shm.key(), 1 << 20)).code(), 0);
    for (int i = 0; i < 50; ++i) {
      if (!s.Write(ShmMessage(2 + i, "h", "r", 0, 1 << 18))) break;
    }
    s.Cancel();  // gone without reading an acknowledgement; the object is unlinked next
  }
  EXPECT_TRUE(WaitUntil([&] { return HostMemoryUsed() == before; }, absl::Seconds(10)))
      << HostMemoryUsed() << " vs " << before;
  // Whole messages or nothing: each applied message put 2^18 samples into bin 7.
  const v1::HistogramInfo info = Info("h");
  EXPECT_EQ(info.samples_applied() % (1 << 18), 0u);
  // Still serving, shared memory included.
  ShmObject again(4096);
  again.Put(0, PackU32({1}));
  Stream s(ingest_.get());
  ASSERT_EQ(s.Call(Register(1, "r", again.key(), 4096)).code(), 0);
  EXPECT_EQ(s.Call(ShmMessage(2, "h", "r", 0, 1)).code(), 0);
  EXPECT_TRUE(s.Finish().ok());
}

TEST_P(ShmIngestTest, OffUnlessAllowed) {
  Options o = ShmOptions();
  o.shm_ingest.allow = false;
  StartServer(o);
  ASSERT_TRUE(Create("h", 4, 4).ok());
  ShmObject shm(4096);
  Stream s(ingest_.get());
  v1::IngestResponse ack = s.Call(Register(1, "r", shm.key(), 4096));
  EXPECT_EQ(ack.code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(ack.message().find("--allow_shm_ingest"), std::string::npos);
  EXPECT_EQ(s.Call(ShmMessage(2, "h", "r", 0, 1)).code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(s.Finish().ok());
}

TEST_P(ShmIngestTest, OverAUnixSocket) {
  Options o = ShmOptions();
  const std::string path = ::testing::TempDir() + "histd-shm-" + std::to_string(getpid()) + ".sock";
  o.address = "unix://" + path;
  StartServer(o);
  EXPECT_EQ(server_->address(), "unix://" + path);
  ASSERT_TRUE(Create("h", 10, 10).ok());
  auto c = std::make_unique<client::Client>(server_->address());
  std::unique_ptr<client::IngestStream> stream = c->OpenIngestStream({});
  absl::StatusOr<std::unique_ptr<client::ShmRing>> ring =
      client::ShmRing::Create(stream.get(), 1 << 16);
  ASSERT_TRUE(ring.ok()) << ring.status();
  ReferenceHistogram ref(10, 10, 255);
  std::mt19937_64 rng(TestSeed());
  for (int i = 0; i < 10; ++i) {
    std::vector<uint32_t> v = RandomIndices(rng, 3000, 100);
    ref.Add(v);
    ASSERT_TRUE((*ring)->Write("h", v1::SAMPLE_TYPE_BIN_INDEX_U32, PackU32(v)).ok());
  }
  EXPECT_TRUE(stream->Finish().OverallStatus().ok());
  EXPECT_EQ(QueryWhole("h").data, ref.Bytes());
}

HISTD_INSTANTIATE_ENGINES(ShmIngestTest);

}  // namespace
}  // namespace histd::server::testing
