// HistogramEntry::ReadAndReset against the real IngestPipeline on an engine whose Apply
// calls `done` later, on a thread of its own, as the CUDA engine does: a read-and-reset then
// meets parts whose bins are already in its copy but whose counters are not yet recorded,
// and must wait for them; with the flusher applying every batch and with several flush
// threads applying them concurrently. Runs without a GPU (the CPU engine underneath).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "server/core/histogram_store.h"
#include "server/core/ingest_pipeline.h"
#include "tests/server/core/deferred_done_engine.h"

namespace histd::server {
namespace {

// Producers submit random bin indices (some messages larger than a staging buffer, so
// applied in parts) while a harvester reads and resets: each cycle's samples_applied equals
// the sum of its bins (no bin reaches the cap in a cycle), and the cycles add up, bin for bin
// and message for message, to what was acknowledged.
class ReadAndResetPipelineTest : public ::testing::TestWithParam<int> {};  // flush threads

TEST_P(ReadAndResetPipelineTest, LateDoneCallbacksCountInTheCycleOfTheirBins) {
  const uint64_t seed = std::random_device{}();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  testing::DeferredDoneEngine engine(seed, std::chrono::microseconds(3000));
  HistogramStore store(engine, 16, uint64_t{1} << 24);
  HistogramSpec spec;
  spec.name = "h";
  spec.shape = HistogramShape{256, 4096, 255};
  absl::StatusOr<std::shared_ptr<HistogramEntry>> entry = store.Create(spec);
  ASSERT_TRUE(entry.ok()) << entry.status();
  const uint64_t bins = spec.shape.bins();
  Options::Pipeline options;
  options.staging_buffers = 4;
  options.staging_buffer_bytes = 64 << 10;
  options.stager_threads = 2;
  options.flush_threads = GetParam();
  options.flush_deadline = absl::Microseconds(200);
  absl::StatusOr<std::unique_ptr<IngestPipeline>> pipeline = IngestPipeline::Create(engine, options);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();

  std::mutex mu;
  std::vector<uint64_t> acked_hits(bins, 0);
  uint64_t acked_messages = 0, acked_samples = 0;
  std::atomic<uint64_t> outstanding{0}, failed{0};
  std::atomic<bool> stop{false};
  auto producer = [&](int id) {
    std::mt19937_64 rng(seed + 1 + id);
    for (int n = 0; !stop.load(); ++n) {
      auto indices = std::make_shared<std::vector<uint32_t>>(n % 20 == 0 ? 40000 : 200 + rng() % 2000);
      for (uint32_t& i : *indices) i = static_cast<uint32_t>(rng() % bins);
      std::string bytes(indices->size() * 4, '\0');
      std::memcpy(bytes.data(), indices->data(), bytes.size());
      outstanding.fetch_add(1);
      (*pipeline)->Submit(
          IngestPipeline::Message{*entry, SampleKind::kBinIndex, SamplePayload(std::move(bytes))},
          [] {},
          [&, indices](absl::Status status, uint64_t) {
            if (status.ok()) {
              std::lock_guard<std::mutex> lock(mu);
              acked_messages += 1;
              acked_samples += indices->size();
              for (uint32_t i : *indices) acked_hits[i] += 1;
            } else {
              failed.fetch_add(1);
            }
            outstanding.fetch_sub(1);
          });
      while (outstanding.load() > 64) std::this_thread::sleep_for(std::chrono::microseconds(100));
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  };
  std::vector<std::thread> producers;
  for (int id = 0; id < 3; ++id) producers.emplace_back(producer, id);

  std::vector<uint64_t> harvested(bins, 0);
  uint64_t messages = 0, samples = 0;
  int cycles = 0, mismatched = 0;
  std::vector<uint8_t> out(bins);
  auto harvest = [&] {
    absl::StatusOr<IngestCounters> c = (*entry)->ReadAndReset(engine, out.data());
    ASSERT_TRUE(c.ok()) << c.status();
    uint64_t total = 0;
    for (uint64_t i = 0; i < bins; ++i) {
      ASSERT_LT(out[i], 255) << "a bin saturated within one cycle";
      harvested[i] += out[i];
      total += out[i];
    }
    mismatched += c->samples_applied != total;
    EXPECT_EQ(c->samples_applied, total) << "cycle " << cycles;
    EXPECT_EQ(c->samples_outside, 0u);
    messages += c->messages_applied;
    samples += c->samples_applied;
    ++cycles;
  };
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
  while (std::chrono::steady_clock::now() < end && !::testing::Test::HasFatalFailure()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    harvest();
  }
  stop.store(true);
  for (auto& t : producers) t.join();
  while (outstanding.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  harvest();
  (*pipeline)->Shutdown();

  EXPECT_EQ(failed.load(), 0u);
  EXPECT_GE(cycles, 20);
  EXPECT_EQ(mismatched, 0) << "of " << cycles << " cycles";
  EXPECT_GT(acked_messages, 50u);
  EXPECT_EQ(messages, acked_messages);
  EXPECT_EQ(samples, acked_samples);
  EXPECT_TRUE(harvested == acked_hits) << "the cycles' bins do not add up to the acknowledged samples";
}

INSTANTIATE_TEST_SUITE_P(FlushThreads, ReadAndResetPipelineTest, ::testing::Values(0, 3));

}  // namespace
}  // namespace histd::server
