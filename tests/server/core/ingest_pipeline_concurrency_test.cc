// The ingest pipeline's concurrency structure: flush threads hand sealed buffers to the
// engine independently (a batch blocked in Engine::Apply, as on a device with no free batch
// slot, holds up no other batch), parked messages are staged as buffers come free, and with
// every combination of flush and stager threads each message is staged and acknowledged
// exactly once, with exact bins; over several devices each batch goes to one device, and a
// device whose flush threads are all blocked in Apply, or whose messages wait for its
// buffers, holds up no other device's batches or messages.
// Runs without a GPU (the CPU engine underneath).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "engine/multi_engine.h"
#include "server/core/histogram_store.h"
#include "server/core/ingest_pipeline.h"
#include "tests/server/core/deferred_done_engine.h"
#include "tests/server/core/forwarding_engine.h"
#include "tests/server/core/pipeline_messages.h"

namespace histd::server {
namespace {

// Polls until counter >= want or the deadline passes.
void WaitUntilAtLeast(const std::atomic<int>& counter, int want, absl::Time deadline) {
  while (counter.load() < want && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(1));
}

// The CPU engine; an Apply whose batch holds the gated histogram blocks until `open`.
class GatedEngine final : public testing::ForwardingEngine {
 public:
  GatedEngine() : ForwardingEngine(1) {}

  const HistogramStorage* gated = nullptr;
  absl::Notification entered;  // a gated Apply is blocked
  absl::Notification open;     // gated Applies may go on

  void Apply(const StagingBuffer& staging, std::vector<IngestItem> items, ApplyDone done) override {
    for (const IngestItem& item : items) {
      if (item.histogram == gated) {
        entered.Notify();
        open.WaitForNotificationWithTimeout(absl::Seconds(20));
        break;
      }
    }
    inner().Apply(staging, std::move(items), std::move(done));
  }
};

// The CPU engine, counting Apply calls (one device of a multi engine).
class CountingEngine final : public testing::ForwardingEngine {
 public:
  CountingEngine() : ForwardingEngine(1) {}
  std::atomic<int> applies{0};
  void Apply(const StagingBuffer& staging, std::vector<IngestItem> items, ApplyDone done) override {
    applies.fetch_add(1);
    inner().Apply(staging, std::move(items), std::move(done));
  }
};

// The CPU engine; every Apply blocks until `open` (a device with no free batch slot).
class BlockingEngine final : public testing::ForwardingEngine {
 public:
  BlockingEngine() : ForwardingEngine(1) {}
  std::atomic<int> entered{0};  // Applies blocked so far
  absl::Notification open;
  void Apply(const StagingBuffer& staging, std::vector<IngestItem> items, ApplyDone done) override {
    entered.fetch_add(1);
    open.WaitForNotificationWithTimeout(absl::Seconds(20));
    inner().Apply(staging, std::move(items), std::move(done));
  }
};

using testing::Ack;
using testing::Indices;
using testing::MustCreate;

TEST(IngestPipelineConcurrencyTest, ABatchBlockedInApplyHoldsUpNoOtherBatch) {
  GatedEngine engine;
  HistogramStore store(engine, 4, uint64_t{1} << 20);
  std::shared_ptr<HistogramEntry> a = MustCreate(store, "a", HistogramShape{4, 8, 255});
  std::shared_ptr<HistogramEntry> b = MustCreate(store, "b", HistogramShape{4, 8, 255});
  ASSERT_TRUE(a && b);
  engine.gated = &a->storage();
  Options::Pipeline options;
  options.staging_buffers = 4;
  options.staging_buffer_bytes = 4096;
  options.flush_threads = 2;
  absl::StatusOr<std::unique_ptr<IngestPipeline>> pipeline =
      IngestPipeline::Create(engine, options);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();

  Ack ack_a, ack_b;
  (*pipeline)->Submit(Indices(a, {1, 2, 3}),
                      [] {}, [&](absl::Status s, uint64_t) { ack_a.Set(s); });
  ASSERT_TRUE(engine.entered.WaitForNotificationWithTimeout(absl::Seconds(10)));
  // a's batch is blocked in Apply; b's goes to another flush thread.
  (*pipeline)->Submit(Indices(b, {4, 5}), [] {},
                      [&](absl::Status s, uint64_t) { ack_b.Set(s); });
  EXPECT_TRUE(ack_b.done.WaitForNotificationWithTimeout(absl::Seconds(10)))
      << "a batch waited for another batch's Apply";
  EXPECT_TRUE(ack_b.status.ok()) << ack_b.status;
  EXPECT_FALSE(ack_a.done.HasBeenNotified());
  engine.open.Notify();
  ASSERT_TRUE(ack_a.done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(ack_a.status.ok()) << ack_a.status;
  (*pipeline)->Shutdown();
  EXPECT_EQ(a->counters().samples_applied, 3u);
  EXPECT_EQ(b->counters().samples_applied, 2u);
}

TEST(IngestPipelineConcurrencyTest, ShutdownWaitsForABatchBlockedInApply) {
  GatedEngine engine;
  HistogramStore store(engine, 4, uint64_t{1} << 20);
  std::shared_ptr<HistogramEntry> a = MustCreate(store, "a", HistogramShape{4, 8, 255});
  ASSERT_TRUE(a);
  engine.gated = &a->storage();
  Options::Pipeline options;
  options.staging_buffers = 2;
  options.staging_buffer_bytes = 4096;
  options.flush_threads = 2;
  absl::StatusOr<std::unique_ptr<IngestPipeline>> pipeline =
      IngestPipeline::Create(engine, options);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  Ack ack;
  (*pipeline)->Submit(Indices(a, {7}), [] {},
                      [&](absl::Status s, uint64_t) { ack.Set(s); });
  ASSERT_TRUE(engine.entered.WaitForNotificationWithTimeout(absl::Seconds(10)));
  absl::Notification shut;
  std::thread shutdown([&] {
    (*pipeline)->Shutdown();
    shut.Notify();
  });
  EXPECT_FALSE(shut.WaitForNotificationWithTimeout(absl::Milliseconds(200)))
      << "Shutdown returned while a batch was still being handed to the engine";
  engine.open.Notify();
  EXPECT_TRUE(shut.WaitForNotificationWithTimeout(absl::Seconds(10)));
  shutdown.join();
  ASSERT_TRUE(ack.done.HasBeenNotified()) << "Shutdown returned before the acknowledgement";
  EXPECT_TRUE(ack.status.ok()) << ack.status;
  EXPECT_EQ((*pipeline)->stats().unacknowledged_messages, 0u);
}

// Histograms on two devices (a multi engine over two CPU engines): every batch is one
// device's, so the devices see exactly as many Apply calls as the pipeline made batches.
TEST(IngestPipelineConcurrencyTest, OnTwoDevicesEachBatchGoesToOneDevice) {
  std::vector<std::unique_ptr<Engine>> members;
  members.push_back(std::make_unique<CountingEngine>());
  members.push_back(std::make_unique<CountingEngine>());
  CountingEngine* device0 = static_cast<CountingEngine*>(members[0].get());
  CountingEngine* device1 = static_cast<CountingEngine*>(members[1].get());
  absl::StatusOr<std::unique_ptr<Engine>> engine = MakeMultiEngine(std::move(members));
  ASSERT_TRUE(engine.ok()) << engine.status();
  HistogramStore store(**engine, 8, uint64_t{1} << 20);
  const HistogramShape shape{16, 16, 255};
  std::vector<std::shared_ptr<HistogramEntry>> histograms;
  for (const char* name : {"h0", "h1", "h2", "h3"}) histograms.push_back(MustCreate(store, name, shape));
  int on_device1 = 0;
  for (const auto& h : histograms) {
    ASSERT_TRUE(h);
    on_device1 += MemberOf(h->storage());
  }
  ASSERT_EQ(on_device1, 2) << "the histograms are not spread over both devices";
  Options::Pipeline options;
  options.staging_buffers = 3;
  options.staging_buffer_bytes = 4096;
  options.flush_threads = 2;
  options.stager_threads = 2;
  options.flush_deadline = absl::Microseconds(300);
  absl::StatusOr<std::unique_ptr<IngestPipeline>> pipeline =
      IngestPipeline::Create(**engine, options);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();

  constexpr int kProducers = 4, kMessages = 50;
  std::vector<uint64_t> expected(histograms.size(), 0);
  std::mutex mu;
  std::atomic<int> acknowledged{0}, failed{0};
  std::vector<std::thread> producers;
  for (int id = 0; id < kProducers; ++id) {
    producers.emplace_back([&, id] {
      std::mt19937_64 rng(id);
      for (int n = 0; n < kMessages; ++n) {
        const size_t h = (id + n) % histograms.size();
        std::vector<uint32_t> indices(1 + rng() % 300);
        for (uint32_t& i : indices) i = static_cast<uint32_t>(rng() % shape.bins());
        {
          std::lock_guard<std::mutex> lock(mu);
          expected[h] += indices.size();
        }
        (*pipeline)->Submit(
            Indices(histograms[h], indices), [] {},
            [&](absl::Status status, uint64_t) {
              if (!status.ok()) failed.fetch_add(1);
              acknowledged.fetch_add(1);
            });
      }
    });
  }
  for (auto& t : producers) t.join();
  WaitUntilAtLeast(acknowledged, kProducers * kMessages, absl::Now() + absl::Seconds(30));
  (*pipeline)->Shutdown();
  EXPECT_EQ(acknowledged.load(), kProducers * kMessages);
  EXPECT_EQ(failed.load(), 0);
  const IngestStats stats = (*pipeline)->stats();
  EXPECT_GT(device0->applies.load(), 0);
  EXPECT_GT(device1->applies.load(), 0);
  EXPECT_EQ(static_cast<uint64_t>(device0->applies.load() + device1->applies.load()), stats.batches)
      << "a batch held messages of both devices";
  for (size_t h = 0; h < histograms.size(); ++h) {
    EXPECT_EQ(histograms[h]->counters().samples_applied, expected[h]) << "histogram " << h;
  }
}

// Two devices: device 0 blocks in Apply until its gate opens, device 1 applies at once;
// histograms a and c are on device 0, b on device 1.
struct TwoDevices {
  BlockingEngine* device0 = nullptr;
  std::unique_ptr<Engine> engine;
  std::unique_ptr<HistogramStore> store;
  std::shared_ptr<HistogramEntry> a, b, c;
};

void MakeTwoDevices(TwoDevices& d) {
  std::vector<std::unique_ptr<Engine>> members;
  members.push_back(std::make_unique<BlockingEngine>());
  members.push_back(std::make_unique<CountingEngine>());
  d.device0 = static_cast<BlockingEngine*>(members[0].get());
  absl::StatusOr<std::unique_ptr<Engine>> engine = MakeMultiEngine(std::move(members));
  ASSERT_TRUE(engine.ok()) << engine.status();
  d.engine = *std::move(engine);
  d.store = std::make_unique<HistogramStore>(*d.engine, 4, uint64_t{1} << 20);
  const HistogramShape shape{4, 8, 255};
  d.a = MustCreate(*d.store, "a", shape);
  d.b = MustCreate(*d.store, "b", shape);
  d.c = MustCreate(*d.store, "c", shape);
  ASSERT_TRUE(d.a && d.b && d.c);
  ASSERT_EQ(MemberOf(d.a->storage()), 0);
  ASSERT_EQ(MemberOf(d.b->storage()), 1);
  ASSERT_EQ(MemberOf(d.c->storage()), 0);
}

// Two devices, each with flush_threads threads: however many batches wait in Apply on one
// device (all of its flush threads), the other device's batches are applied meanwhile.
TEST(IngestPipelineConcurrencyTest, OnTwoDevicesABlockedDeviceHoldsUpNoBatchOfTheOther) {
  TwoDevices d;
  ASSERT_NO_FATAL_FAILURE(MakeTwoDevices(d));
  BlockingEngine* device0 = d.device0;
  std::shared_ptr<HistogramEntry> a = d.a, b = d.b, c = d.c;
  Options::Pipeline options;
  options.staging_buffers = 4;
  options.staging_buffer_bytes = 4096;
  options.flush_threads = 2;
  absl::StatusOr<std::unique_ptr<IngestPipeline>> pipeline =
      IngestPipeline::Create(*d.engine, options);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();

  // Two batches of device 0 (a's, then c's) block both of its flush threads.
  Ack ack_a, ack_b, ack_c;
  (*pipeline)->Submit(Indices(a, {1, 2, 3}), [] {},
                      [&](absl::Status s, uint64_t) { ack_a.Set(s); });
  const absl::Time until = absl::Now() + absl::Seconds(10);
  WaitUntilAtLeast(device0->entered, 1, until);
  (*pipeline)->Submit(Indices(c, {4}), [] {}, [&](absl::Status s, uint64_t) { ack_c.Set(s); });
  WaitUntilAtLeast(device0->entered, 2, until);
  ASSERT_EQ(device0->entered.load(), 2) << "device 0's two batches did not both reach Apply";
  (*pipeline)->Submit(Indices(b, {5, 6}), [] {},
                      [&](absl::Status s, uint64_t) { ack_b.Set(s); });
  EXPECT_TRUE(ack_b.done.WaitForNotificationWithTimeout(absl::Seconds(10)))
      << "device 1's batch waited for device 0's flush threads";
  EXPECT_TRUE(ack_b.status.ok()) << ack_b.status;
  EXPECT_FALSE(ack_a.done.HasBeenNotified());
  device0->open.Notify();
  ASSERT_TRUE(ack_a.done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(ack_c.done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(ack_a.status.ok()) << ack_a.status;
  EXPECT_TRUE(ack_c.status.ok()) << ack_c.status;
  (*pipeline)->Shutdown();
  EXPECT_EQ(a->counters().samples_applied, 3u);
  EXPECT_EQ(b->counters().samples_applied, 2u);
  EXPECT_EQ(c->counters().samples_applied, 1u);
}

// Two devices, one staging buffer each (staging_buffers divides among them): while device 0's
// buffer is blocked in Apply and a later message of device 0 waits for it, a message of
// device 1 is staged, applied and acknowledged; the parked message of device 0 holds up
// nothing of device 1.
TEST(IngestPipelineConcurrencyTest, OnTwoDevicesAMessageParkedForOneDeviceHoldsUpNoneOfTheOther) {
  TwoDevices d;
  ASSERT_NO_FATAL_FAILURE(MakeTwoDevices(d));
  BlockingEngine* device0 = d.device0;
  std::shared_ptr<HistogramEntry> a = d.a, b = d.b, c = d.c;
  Options::Pipeline options;
  options.staging_buffers = 2;
  options.staging_buffer_bytes = 4096;
  options.flush_threads = 2;
  options.stager_threads = 2;
  absl::StatusOr<std::unique_ptr<IngestPipeline>> pipeline =
      IngestPipeline::Create(*d.engine, options);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  EXPECT_EQ((*pipeline)->stats().staging_buffers, 2u);

  Ack ack_a, ack_b, ack_c;
  std::atomic<bool> staged_b{false}, staged_c{false};
  // A stager task calls on_staged after its copy, possibly after the batch it joined has
  // been applied and acknowledged (the ingest reactor waits for both, in either order).
  const auto eventually = [](const std::atomic<bool>& flag) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (!flag.load() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(1));
    return flag.load();
  };
  (*pipeline)->Submit(Indices(a, {1, 2, 3}), [] {},
                      [&](absl::Status s, uint64_t) { ack_a.Set(s); });
  WaitUntilAtLeast(device0->entered, 1, absl::Now() + absl::Seconds(10));
  ASSERT_EQ(device0->entered.load(), 1) << "device 0's batch did not reach Apply";
  // Device 0's only buffer is in flight: c waits for it.
  (*pipeline)->Submit(Indices(c, {4}), [&] { staged_c = true; },
                      [&](absl::Status s, uint64_t) { ack_c.Set(s); });
  EXPECT_FALSE(staged_c.load()) << "a message was staged with no buffer of its device free";
  EXPECT_EQ((*pipeline)->stats().queued_messages, 1u);
  (*pipeline)->Submit(Indices(b, {5, 6}), [&] { staged_b = true; },
                      [&](absl::Status s, uint64_t) { ack_b.Set(s); });
  EXPECT_TRUE(ack_b.done.WaitForNotificationWithTimeout(absl::Seconds(10)))
      << "device 1's message waited behind a message parked for device 0";
  EXPECT_TRUE(ack_b.status.ok()) << ack_b.status;
  EXPECT_TRUE(eventually(staged_b));
  EXPECT_FALSE(ack_a.done.HasBeenNotified());
  EXPECT_FALSE(ack_c.done.HasBeenNotified());
  device0->open.Notify();
  ASSERT_TRUE(ack_a.done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(ack_c.done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(ack_a.status.ok()) << ack_a.status;
  EXPECT_TRUE(ack_c.status.ok()) << ack_c.status;
  EXPECT_TRUE(eventually(staged_c));
  (*pipeline)->Shutdown();
  const IngestStats stats = (*pipeline)->stats();
  EXPECT_EQ(stats.messages, 3u);
  EXPECT_EQ(stats.samples, 6u);
  EXPECT_EQ(stats.parked_messages, 1u);
  EXPECT_EQ(stats.unacknowledged_messages, 0u);
  EXPECT_EQ(a->counters().samples_applied, 3u);
  EXPECT_EQ(b->counters().samples_applied, 2u);
  EXPECT_EQ(c->counters().samples_applied, 1u);
  // Submits after Shutdown, to either device, are refused.
  Ack late_a, late_b;
  (*pipeline)->Submit(Indices(a, {1}), [] {}, [&](absl::Status s, uint64_t) { late_a.Set(s); });
  (*pipeline)->Submit(Indices(b, {1}), [] {}, [&](absl::Status s, uint64_t) { late_b.Set(s); });
  EXPECT_EQ(late_a.status.code(), absl::StatusCode::kUnavailable) << late_a.status;
  EXPECT_EQ(late_b.status.code(), absl::StatusCode::kUnavailable) << late_b.status;
}

// Each device stages into buffers of its own: fewer staging buffers than devices is refused.
TEST(IngestPipelineConcurrencyTest, FewerStagingBuffersThanDevicesIsInvalid) {
  std::vector<std::unique_ptr<Engine>> members;
  members.push_back(std::make_unique<CountingEngine>());
  members.push_back(std::make_unique<CountingEngine>());
  absl::StatusOr<std::unique_ptr<Engine>> engine = MakeMultiEngine(std::move(members));
  ASSERT_TRUE(engine.ok()) << engine.status();
  Options::Pipeline options;
  options.staging_buffers = 1;
  options.staging_buffer_bytes = 4096;
  absl::StatusOr<std::unique_ptr<IngestPipeline>> pipeline =
      IngestPipeline::Create(**engine, options);
  EXPECT_EQ(pipeline.status().code(), absl::StatusCode::kInvalidArgument) << pipeline.status();
  EXPECT_NE(pipeline.status().message().find("staging_buffers"), std::string::npos)
      << pipeline.status();
  options.staging_buffers = 5;  // 3 + 2
  pipeline = IngestPipeline::Create(**engine, options);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();
  EXPECT_EQ((*pipeline)->stats().staging_buffers, 5u);
}

struct Threads {
  int flush;
  int stagers;
  int devices;  // 2: a multi engine, each device with its own pipeline and one buffer
};

class IngestPipelineThreadsTest : public ::testing::TestWithParam<Threads> {};

// Six producers, three histograms, two small staging buffers (one per device on two):
// messages park, some are split across buffers, batches complete late and out of the
// producers' order. Every message is staged once and acknowledged once, OK, and the bins are
// exactly the samples submitted.
TEST_P(IngestPipelineThreadsTest, ManyProducersFewBuffersEveryMessageOnceAndExact) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::vector<std::unique_ptr<Engine>> members;
  for (int d = 0; d < GetParam().devices; ++d) {
    members.push_back(std::make_unique<testing::DeferredDoneEngine>(
        seed + d, std::chrono::microseconds(500)));
  }
  absl::StatusOr<std::unique_ptr<Engine>> owned =
      members.size() == 1 ? std::move(members[0]) : MakeMultiEngine(std::move(members));
  ASSERT_TRUE(owned.ok()) << owned.status();
  Engine& engine = **owned;
  HistogramStore store(engine, 8, uint64_t{1} << 20);
  const HistogramShape shape{32, 64, 255};
  std::vector<std::shared_ptr<HistogramEntry>> histograms;
  for (const char* name : {"h0", "h1", "h2"}) histograms.push_back(MustCreate(store, name, shape));
  ASSERT_TRUE(histograms[0] && histograms[1] && histograms[2]);
  Options::Pipeline options;
  options.staging_buffers = 2;
  options.staging_buffer_bytes = 4096;  // 1,024 indices
  options.flush_threads = GetParam().flush;
  options.stager_threads = GetParam().stagers;
  options.acknowledger_threads = 1;
  options.flush_deadline = absl::Microseconds(100);
  absl::StatusOr<std::unique_ptr<IngestPipeline>> pipeline =
      IngestPipeline::Create(engine, options);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();

  constexpr int kProducers = 6, kMessages = 60;
  const uint64_t bins = shape.bins();
  std::mutex mu;
  std::vector<std::vector<uint64_t>> expected(histograms.size(), std::vector<uint64_t>(bins, 0));
  std::atomic<int> staged{0}, acknowledged{0}, failed{0}, twice{0};
  std::vector<std::thread> producers;
  for (int id = 0; id < kProducers; ++id) {
    producers.emplace_back([&, id] {
      std::mt19937_64 rng(seed + id);
      for (int n = 0; n < kMessages; ++n) {
        const size_t h = rng() % histograms.size();
        // Mostly a few hundred samples; every 15th larger than a buffer (split).
        std::vector<uint32_t> indices(n % 15 == 0 ? 2500 : 1 + rng() % 600);
        for (uint32_t& i : indices) i = static_cast<uint32_t>(rng() % bins);
        {
          std::lock_guard<std::mutex> lock(mu);
          for (uint32_t i : indices) expected[h][i] += 1;
        }
        auto staged_once = std::make_shared<std::atomic<int>>(0);
        auto acked_once = std::make_shared<std::atomic<int>>(0);
        (*pipeline)->Submit(
            Indices(histograms[h], indices),
            [&, staged_once] {
              if (staged_once->fetch_add(1) > 0) twice.fetch_add(1);
              staged.fetch_add(1);
            },
            [&, acked_once](absl::Status status, uint64_t) {
              if (acked_once->fetch_add(1) > 0) twice.fetch_add(1);
              if (!status.ok()) failed.fetch_add(1);
              acknowledged.fetch_add(1);
            });
      }
    });
  }
  for (auto& t : producers) t.join();
  WaitUntilAtLeast(acknowledged, kProducers * kMessages, absl::Now() + absl::Seconds(30));
  const IngestStats stats = (*pipeline)->stats();
  (*pipeline)->Shutdown();

  EXPECT_EQ(acknowledged.load(), kProducers * kMessages);
  EXPECT_EQ(staged.load(), kProducers * kMessages);
  EXPECT_EQ(twice.load(), 0) << "a callback ran twice";
  EXPECT_EQ(failed.load(), 0);
  EXPECT_GT(stats.parked_messages, 0u) << "no message waited for a buffer: the test proves less";
  EXPECT_EQ(stats.messages, uint64_t{kProducers} * kMessages);
  for (size_t h = 0; h < histograms.size(); ++h) {
    std::vector<uint8_t> bins_read(bins);
    absl::StatusOr<IngestCounters> counters = histograms[h]->ReadAndReset(engine, bins_read.data());
    ASSERT_TRUE(counters.ok()) << counters.status();
    uint64_t total = 0;
    for (uint64_t i = 0; i < bins; ++i) total += expected[h][i];
    EXPECT_EQ(counters->samples_applied, total) << "histogram " << h;
    for (uint64_t i = 0; i < bins; ++i) {
      ASSERT_LT(expected[h][i], 255u) << "the test's samples saturate a bin";
      ASSERT_EQ(bins_read[i], expected[h][i]) << "histogram " << h << " bin " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(FlushAndStagerThreads, IngestPipelineThreadsTest,
                         ::testing::Values(Threads{0, 0, 1}, Threads{0, 3, 1}, Threads{3, 0, 1},
                                           Threads{3, 3, 1}, Threads{0, 0, 2}, Threads{0, 3, 2},
                                           Threads{3, 0, 2}, Threads{3, 3, 2}),
                         [](const ::testing::TestParamInfo<Threads>& info) {
                           return "flush" + std::to_string(info.param.flush) + "_stagers" +
                                  std::to_string(info.param.stagers) + "_devices" +
                                  std::to_string(info.param.devices);
                         });

}  // namespace
}  // namespace histd::server
