// When the ingest pipeline hands a staging buffer to the engine: at once while fewer than
// eager_flush_depth batches of its device are in flight; otherwise at its flush deadline,
// or as soon as a batch of that device completes, whichever is first. The engine below lands
// bins at once and holds each batch's completion until the test releases it, as a device
// whose batch slots are busy. Runs without a GPU (the CPU engine underneath).
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "server/core/histogram_store.h"
#include "server/core/ingest_pipeline.h"
#include "tests/server/core/forwarding_engine.h"
#include "tests/server/core/pipeline_messages.h"

// A namespace of its own: the service tests build as one unity translation unit.
namespace histd::server::eager_flush_test {
namespace {

// The CPU engine; each Apply's `done` is held until Complete() releases the oldest.
class HeldDoneEngine final : public testing::ForwardingEngine {
 public:
  HeldDoneEngine() : ForwardingEngine(1) {}
  ~HeldDoneEngine() override { CompleteAll(); }

  void Apply(const StagingBuffer& staging, std::vector<IngestItem> items, ApplyDone done) override {
    inner().Apply(staging, std::move(items),
                  [this, done = std::move(done)](absl::Status s, std::vector<IngestItemResult> r) {
                    absl::MutexLock lock(&mu_);
                    held_.push_back([done, s, r = std::move(r)]() mutable { done(s, std::move(r)); });
                  });
  }

  // Batches applied and not yet completed; waits up to `timeout` for at least `want`.
  size_t WaitForHeld(size_t want, absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return held_.size() >= want; };
    mu_.AwaitWithTimeout(absl::Condition(&enough), timeout);
    return held_.size();
  }

  // Completes the oldest held batch (its acknowledgements follow).
  void CompleteOne() {
    std::function<void()> next;
    {
      absl::MutexLock lock(&mu_);
      if (held_.empty()) return;
      next = std::move(held_.front());
      held_.pop_front();
    }
    next();
  }

  void CompleteAll() {
    while (WaitForHeld(1, absl::ZeroDuration()) > 0) CompleteOne();
  }

 private:
  absl::Mutex mu_;
  std::deque<std::function<void()>> held_ ABSL_GUARDED_BY(mu_);
};

using testing::Ack;
using testing::Indices;

class EagerFlushTest : public ::testing::Test {
 protected:
  void Start(absl::Duration flush_deadline) {
    histogram_ = testing::MustCreate(store_, "h", HistogramShape{4, 8, 255});
    ASSERT_NE(histogram_, nullptr);
    Options::Pipeline options;
    options.staging_buffers = 4;
    options.staging_buffer_bytes = 4096;
    options.flush_threads = 1;
    options.eager_flush_depth = 1;
    options.flush_deadline = flush_deadline;
    absl::StatusOr<std::unique_ptr<IngestPipeline>> pipeline =
        IngestPipeline::Create(engine_, options);
    ASSERT_TRUE(pipeline.ok()) << pipeline.status();
    pipeline_ = *std::move(pipeline);
  }

  void Submit(uint32_t bin, Ack* ack) {
    pipeline_->Submit(Indices(histogram_, {bin}), [] {},
                      [ack](absl::Status s, uint64_t) { ack->Set(std::move(s)); });
  }

  void TearDown() override {
    engine_.CompleteAll();
    if (pipeline_ != nullptr) {
      std::thread completer([this] {  // batches sealed by the shutdown drain
        while (!stopped_.HasBeenNotified()) {
          engine_.CompleteAll();
          absl::SleepFor(absl::Milliseconds(1));
        }
      });
      pipeline_->Shutdown();
      stopped_.Notify();
      completer.join();
    }
  }

  HeldDoneEngine engine_;
  HistogramStore store_{engine_, 4, uint64_t{1} << 20};
  std::shared_ptr<HistogramEntry> histogram_;
  std::unique_ptr<IngestPipeline> pipeline_;
  absl::Notification stopped_;
};

TEST_F(EagerFlushTest, ABatchGoesAtOnceWhileTheDeviceHasRoom) {
  Start(absl::Hours(1));
  Ack a;
  Submit(1, &a);
  EXPECT_EQ(engine_.WaitForHeld(1, absl::Seconds(10)), 1u)
      << "a message waited for a one-hour deadline with no batch in flight";
  engine_.CompleteOne();
  ASSERT_TRUE(a.done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(a.status.ok()) << a.status;
}

TEST_F(EagerFlushTest, ABufferBehindABusyDeviceGoesWhenItsBatchCompletes) {
  Start(absl::Hours(1));
  Ack a, b, c;
  Submit(1, &a);
  ASSERT_EQ(engine_.WaitForHeld(1, absl::Seconds(10)), 1u);
  // One batch in flight (eager_flush_depth = 1): these wait in the current buffer.
  Submit(2, &b);
  Submit(3, &c);
  EXPECT_EQ(engine_.WaitForHeld(2, absl::Milliseconds(100)), 1u)
      << "a second batch went while eager_flush_depth batches were in flight";
  engine_.CompleteOne();
  ASSERT_TRUE(a.done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  // The device has room again: b and c go at once, together, long before their deadline.
  EXPECT_EQ(engine_.WaitForHeld(1, absl::Seconds(10)), 1u)
      << "the waiting buffer was not handed over when the batch ahead of it completed";
  engine_.CompleteOne();
  ASSERT_TRUE(b.done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(c.done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(b.status.ok()) << b.status;
  EXPECT_TRUE(c.status.ok()) << c.status;
  EXPECT_EQ(pipeline_->stats().batches, 2u);
}

TEST_F(EagerFlushTest, ABufferBehindABusyDeviceGoesAtItsDeadline) {
  Start(absl::Milliseconds(20));
  Ack a, b;
  Submit(1, &a);
  ASSERT_EQ(engine_.WaitForHeld(1, absl::Seconds(10)), 1u);
  const absl::Time submitted = absl::Now();
  Submit(2, &b);
  // a's batch is never completed here: b's buffer is sealed by its deadline alone.
  EXPECT_EQ(engine_.WaitForHeld(2, absl::Seconds(10)), 2u)
      << "a buffer behind a busy device waited past its flush deadline";
  EXPECT_GE(absl::Now() - submitted, absl::Milliseconds(15));
  EXPECT_FALSE(b.done.HasBeenNotified());
  engine_.CompleteAll();
  ASSERT_TRUE(a.done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  ASSERT_TRUE(b.done.WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_TRUE(b.status.ok()) << b.status;
}

}  // namespace
}  // namespace histd::server::eager_flush_test
