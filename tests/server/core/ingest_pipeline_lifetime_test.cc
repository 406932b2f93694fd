// The ingest pipeline keeps every histogram of a batch alive until it has finished handing
// the batch to the engine. An engine may call `done` inline (the CPU engine does): the
// acknowledgements it releases let a client delete a histogram of the batch while the
// pipeline still holds that histogram's apply-order lock, and the lock must not be released
// into freed memory. Runs without a GPU (the CPU engine underneath).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "server/core/histogram_store.h"
#include "server/core/ingest_pipeline.h"
#include "tests/server/core/forwarding_engine.h"

namespace histd::server {
namespace {

// The CPU engine, whose Apply calls `done` inline; Apply then returns only once `release`
// is notified, so that the test can act between the acknowledgement and Apply's return.
class HoldingApplyEngine final : public testing::ForwardingEngine {
 public:
  HoldingApplyEngine() : ForwardingEngine(1) {}

  absl::Notification applied;  // `done` has returned
  absl::Notification release;  // Apply may return

  void Apply(const StagingBuffer& staging, std::vector<IngestItem> items, ApplyDone done) override {
    inner().Apply(staging, std::move(items), std::move(done));
    applied.Notify();
    release.WaitForNotificationWithTimeout(absl::Seconds(10));
  }
};

TEST(IngestPipelineLifetimeTest, AHistogramDeletedOnItsAcknowledgementOutlivesTheBatchHandOver) {
  HoldingApplyEngine engine;
  HistogramStore store(engine, 4, uint64_t{1} << 20);
  HistogramSpec spec;
  spec.name = "h";
  spec.shape = HistogramShape{4, 8, 255};
  absl::StatusOr<std::shared_ptr<HistogramEntry>> created = store.Create(spec);
  ASSERT_TRUE(created.ok()) << created.status();
  const std::weak_ptr<HistogramEntry> watched = *created;
  Options::Pipeline options;
  options.staging_buffers = 2;
  options.staging_buffer_bytes = 4096;
  options.flush_deadline = absl::Microseconds(100);
  absl::StatusOr<std::unique_ptr<IngestPipeline>> pipeline = IngestPipeline::Create(engine, options);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status();

  absl::Notification acknowledged;
  absl::Status ack_status = absl::UnknownError("never acknowledged");
  const uint32_t index = 3;
  (*pipeline)->Submit(
      IngestPipeline::Message{*std::move(created), SampleKind::kBinIndex,
                              SamplePayload(std::string(reinterpret_cast<const char*>(&index), 4))},
      [] {},
      [&](absl::Status status, uint64_t) {
        ack_status = status;
        acknowledged.Notify();
      });
  ASSERT_TRUE(acknowledged.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(ack_status.ok()) << ack_status;
  ASSERT_TRUE(engine.applied.WaitForNotificationWithTimeout(absl::Seconds(10)));
  // The client deletes the histogram on its acknowledgement, while Apply has not returned.
  ASSERT_TRUE(store.Delete("h").ok());
  // Whatever else still holds it lets go within milliseconds (the acknowledger's closure).
  const absl::Time until = absl::Now() + absl::Milliseconds(300);
  while (!watched.expired() && absl::Now() < until) absl::SleepFor(absl::Milliseconds(5));
  EXPECT_FALSE(watched.expired())
      << "the histogram was freed while the pipeline still held its apply-order lock";
  engine.release.Notify();
  (*pipeline)->Shutdown();
  EXPECT_TRUE(watched.expired()) << "the pipeline kept the deleted histogram alive";
}

}  // namespace
}  // namespace histd::server
