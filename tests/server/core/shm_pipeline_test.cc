// IngestPipeline with messages in a shared-memory region (ShmRegion), on the two routes of
// docs/shm-ingest.md: an engine that reads regions in place (the CPU engine) and one that
// does not (a CPU engine that declines RegisterHostRegion, as the CUDA engine does), so the
// staging route runs without a GPU. Plus a producer that rewrites a message after sending
// it: the daemon must only stay safe (no bin out of bounds, nothing of a bad message applied).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <future>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "server/core/histogram_store.h"
#include "server/core/ingest_pipeline.h"
#include "tests/server/core/forwarding_engine.h"
#include "server/core/memory_budget.h"
#include "server/core/shm_region.h"

namespace histd::server {
namespace {

// The CPU engine, optionally without region support, optionally running a hook before each
// Apply (while the pipeline waits for it).
class ObservingEngine final : public testing::ForwardingEngine {
 public:
  explicit ObservingEngine(bool reads_regions) : ForwardingEngine(2), reads_regions_(reads_regions) {}
  std::function<void()> before_apply;

  absl::StatusOr<std::unique_ptr<HostRegion>> RegisterHostRegion(const uint8_t* data,
                                                                size_t bytes) override {
    if (!reads_regions_) return nullptr;
    return ForwardingEngine::RegisterHostRegion(data, bytes);
  }
  void Apply(const StagingBuffer& staging, std::vector<IngestItem> items, ApplyDone done) override {
    items_seen += items.size();
    for (const IngestItem& item : items) regions_seen += item.region != nullptr;
    if (before_apply) before_apply();
    ForwardingEngine::Apply(staging, std::move(items), std::move(done));
  }

  std::atomic<uint64_t> items_seen{0}, regions_seen{0};

 private:
  const bool reads_regions_;
};

// A shared-memory object written through its own mapping; unlinked at the end.
struct TestObject {
  explicit TestObject(size_t n) : bytes(n) {
    static std::atomic<int> counter{0};
    key = "/histd-pipeline-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
    const int fd = shm_open(key.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(ftruncate(fd, static_cast<off_t>(n)), 0);
    data = static_cast<uint8_t*>(mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    close(fd);
  }
  ~TestObject() {
    munmap(data, bytes);
    shm_unlink(key.c_str());
  }
  void PutU32(size_t offset, const std::vector<uint32_t>& v) {
    std::memcpy(data + offset, v.data(), v.size() * 4);
  }
  std::string key;
  size_t bytes;
  uint8_t* data = nullptr;
};

struct Outcome {
  absl::Status status;
  uint64_t samples = 0;
};

class ShmPipelineTest : public ::testing::TestWithParam<bool> {  // reads regions in place
 protected:
  void SetUp() override {
    engine_ = std::make_unique<ObservingEngine>(GetParam());
    store_ = std::make_unique<HistogramStore>(*engine_, 8, uint64_t{1} << 20);
    Options::Pipeline options;
    options.staging_buffers = 2;
    options.staging_buffer_bytes = 64 << 10;
    options.stager_threads = 1;
    pipeline_ = *IngestPipeline::Create(*engine_, options);
    HistogramSpec spec;
    spec.name = "h";
    spec.shape = HistogramShape{30, 50, 255};
    entry_ = *store_->Create(spec);
  }

  Outcome Submit(const std::shared_ptr<const ShmRegion>& region, size_t offset, size_t bytes) {
    IngestPipeline::Message m;
    m.histogram = entry_;
    m.kind = SampleKind::kBinIndex;
    m.region = region;
    m.region_offset = offset;
    m.region_bytes = bytes;
    auto done = std::make_shared<std::promise<Outcome>>();
    std::future<Outcome> result = done->get_future();
    pipeline_->Submit(std::move(m), [] {}, [done](absl::Status s, uint64_t samples) {
      done->set_value(Outcome{std::move(s), samples});
    });
    return result.get();
  }

  std::vector<uint8_t> Bins() {
    std::vector<uint8_t> out(30 * 50);
    ReadSpec spec;
    spec.region = Region{0, 30, 0, 50};
    EXPECT_TRUE(engine_->ReadBins(entry_->storage(), spec, out.data()).ok());
    return out;
  }

  MemoryBudget budget_{"host memory", "--max_memory_bytes", uint64_t{1} << 30};
  std::unique_ptr<ObservingEngine> engine_;
  std::unique_ptr<HistogramStore> store_;
  std::unique_ptr<IngestPipeline> pipeline_;
  std::shared_ptr<HistogramEntry> entry_;
};

TEST_P(ShmPipelineTest, AppliesExactlyAndRejectsWhole) {
  TestObject object(64 << 10);
  absl::StatusOr<std::shared_ptr<ShmRegion>> region =
      ShmRegion::Open(object.key, object.bytes, *engine_, budget_);
  ASSERT_TRUE(region.ok()) << region.status();
  EXPECT_EQ((*region)->host_region() != nullptr, GetParam());
  EXPECT_EQ(budget_.used(), 64u << 10);
  std::mt19937_64 rng(std::random_device{}());
  std::vector<uint64_t> hits(1500, 0);
  for (int round = 0; round < 20; ++round) {
    std::vector<uint32_t> v(1 + rng() % 16000);
    for (uint32_t& x : v) x = rng() % 1500;
    const size_t offset = 4 * (rng() % (16384 - v.size()));
    object.PutU32(offset, v);
    Outcome o = Submit(*region, offset, v.size() * 4);
    ASSERT_TRUE(o.status.ok()) << o.status;
    EXPECT_EQ(o.samples, v.size());
    for (uint32_t x : v) hits[x] += 1;
  }
  // The last sample out of range: nothing of the message applied.
  object.PutU32(0, {1, 2, 3, 1500});
  Outcome bad = Submit(*region, 0, 16);
  EXPECT_EQ(bad.status.code(), absl::StatusCode::kInvalidArgument) << bad.status;
  EXPECT_NE(bad.status.message().find("sample 3"), std::string::npos) << bad.status;
  const std::vector<uint8_t> bins = Bins();
  for (size_t i = 0; i < hits.size(); ++i) {
    ASSERT_EQ(bins[i], std::min<uint64_t>(hits[i], 255)) << "bin " << i;
  }
  // In place: every item came from the region; staged: none did.
  EXPECT_EQ(engine_->regions_seen.load(), GetParam() ? engine_->items_seen.load() : 0u);
  // The budget is returned with the last reference: the test's, and the pipeline's (each
  // message holds the region until just after its acknowledgement).
  region->reset();
  for (int i = 0; i < 5000 && budget_.used() != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_EQ(budget_.used(), 0u);
}

// A producer that rewrites its samples after it sent the message (a protocol violation):
// on the in-place route the engine validates what it reads, so the message is rejected
// whole, naming the first bad sample it read; on the staging route the copy that was
// validated is the one applied.
TEST_P(ShmPipelineTest, RewriteAfterSubmitStaysInBounds) {
  TestObject object(4096);
  absl::StatusOr<std::shared_ptr<ShmRegion>> region =
      ShmRegion::Open(object.key, object.bytes, *engine_, budget_);
  ASSERT_TRUE(region.ok()) << region.status();
  object.PutU32(0, std::vector<uint32_t>(1000, 7));
  engine_->before_apply = [&] {
    std::vector<uint32_t> hostile(1000, 0xffffffffu);
    hostile[0] = 9;
    object.PutU32(0, hostile);
  };
  Outcome o = Submit(*region, 0, 4000);
  const std::vector<uint8_t> bins = Bins();
  uint64_t total = 0;
  for (uint8_t b : bins) total += b;
  if (GetParam()) {
    EXPECT_EQ(o.status.code(), absl::StatusCode::kInvalidArgument) << o.status;
    EXPECT_NE(o.status.message().find("sample 1: bin index 4294967295"), std::string::npos)
        << o.status;
    EXPECT_EQ(total, 0u);
    EXPECT_EQ(entry_->counters().samples_rejected, 1000u);
    EXPECT_EQ(entry_->counters().samples_applied, 0u);
  } else {
    EXPECT_TRUE(o.status.ok()) << o.status;
    EXPECT_EQ(bins[7], 255);  // the validated copy
    EXPECT_EQ(total, 255u);
  }
}

INSTANTIATE_TEST_SUITE_P(Routes, ShmPipelineTest, ::testing::Values(true, false),
                         [](const ::testing::TestParamInfo<bool>& i) {
                           return i.param ? std::string("in_place") : std::string("staged");
                         });

}  // namespace
}  // namespace histd::server
