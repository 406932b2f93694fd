#include "server/grpc/watch_stream.h"

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "engine/thread_name.h"
#include "server/core/watch_view.h"
#include "server/grpc/status_util.h"

namespace histd::server {

constexpr absl::Duration kTick = absl::Milliseconds(10);

// Thread safety: gRPC reactions, the ticker and worker tasks run concurrently; the state
// they share is guarded by mu_. The reactor is reference-counted (gRPC until OnDone, the
// ticker while it ticks, a worker while it reads) and deletes itself at zero.
class WatchReactor final : public grpc::ServerWriteReactor<v1::WatchUpdate> {
 public:
  WatchReactor(grpc::CallbackServerContext* context, ServiceContext& ctx,
               WatchRegistry& registry, const v1::WatchRequest& request)
      : context_(context), ctx_(ctx), registry_(registry), request_(request) {}

  // Checks the request, then registers; the first read is due at once.
  void Begin() {
    absl::Status s = Prepare();
    if (s.ok()) {
      {
        absl::MutexLock lock(&mu_);
        registered_ = true;  // before the first tick can finish the stream
      }
      s = registry_.Add(this);
      if (!s.ok()) {
        absl::MutexLock lock(&mu_);
        registered_ = false;
      }
    }
    if (!s.ok()) Finish(ToGrpcStatus(s));  // never registered: no tick, no read
  }

  void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  // Shutdown: the stream ends UNAVAILABLE at its next idle moment.
  void Stop() {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }

  // Ticker thread: starts a due read, ends a stopped idle stream, cancels a stalled write.
  void Tick(absl::Time now) {
    std::optional<grpc::Status> finish;
    bool read = false, cancel = false;
    {
      absl::MutexLock lock(&mu_);
      if (done_ || finished_) return;
      if (state_ == State::kIdle && context_->IsCancelled()) {
        // An idle stream has no operation that would fail: look (the context is valid
        // until OnDone, which waits for mu_).
        finish = FinishLocked(
            grpc::Status(grpc::StatusCode::CANCELLED, "watch stream cancelled by the client"));
      } else if (state_ == State::kIdle && stopping_) {
        finish = FinishLocked(Unavailable());
      } else if (state_ == State::kIdle && now >= next_read_) {
        state_ = State::kReading;
        read = true;
      } else if (state_ == State::kWriting && !cancelling_ &&
                 now - write_started_ >= ctx_.options->render.watch_stall_timeout) {
        cancelling_ = true;  // no Finish until TryCancel returns: the context stays valid
        cancel = true;
      }
    }
    if (finish) Finish(*finish);
    if (read) {
      Ref();
      ctx_.workers->Schedule([this] {
        ReadAndMaybeWrite();
        Unref();
      });
    }
    if (cancel) {
      context_->TryCancel();
      std::optional<grpc::Status> deferred;
      {
        absl::MutexLock lock(&mu_);
        cancelling_ = false;
        deferred = std::exchange(deferred_finish_, std::nullopt);
      }
      if (deferred) Finish(*deferred);
    }
  }

  void OnWriteDone(bool ok) override {
    std::optional<grpc::Status> finish;
    {
      absl::MutexLock lock(&mu_);
      state_ = State::kIdle;
      if (!ok) {
        finish = FinishLocked(
            grpc::Status(grpc::StatusCode::CANCELLED, "watch stream closed by the client"));
      } else if (stopping_) {
        finish = FinishLocked(Unavailable());
      }
    }
    if (finish) Finish(*finish);
  }

  void OnDone() override {
    bool registered;
    {
      absl::MutexLock lock(&mu_);
      done_ = true;
      registered = registered_;
    }
    if (registered) registry_.Remove(this);
    Unref();
  }

 private:
  enum class State { kIdle, kReading, kWriting };

  static grpc::Status Unavailable() {
    return grpc::Status(grpc::StatusCode::UNAVAILABLE, "the daemon is shutting down");
  }

  // The status to Finish with now, or none when a TryCancel is in progress (it finishes).
  std::optional<grpc::Status> FinishLocked(grpc::Status status)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (finished_) return std::nullopt;
    finished_ = true;
    if (cancelling_) {
      deferred_finish_ = std::move(status);
      return std::nullopt;
    }
    return status;
  }

  absl::Status Prepare() {
    absl::StatusOr<ConcurrencyLimit::Permit> permit = ctx_.queries.TryAcquire();
    if (!permit.ok()) return permit.status();
    permit_ = *std::move(permit);
    absl::StatusOr<std::unique_ptr<WatchView>> watch = WatchView::Open(ctx_, request_);
    if (!watch.ok()) return watch.status();
    watch_ = *std::move(watch);
    return absl::OkStatus();
  }

  // Worker thread: reads the view; writes it when it changed, else waits for the next read.
  void ReadAndMaybeWrite() {
    const absl::Time started = absl::Now();
    const absl::StatusOr<bool> changed = watch_->Refresh();
    std::optional<grpc::Status> finish;
    bool write = false;
    {
      absl::MutexLock lock(&mu_);
      next_read_ = started + watch_->interval();
      if (!changed.ok()) {
        finish = FinishLocked(ToGrpcStatus(changed.status()));
      } else if (stopping_) {
        finish = FinishLocked(Unavailable());
      } else if (*changed) {
        state_ = State::kWriting;
        write_started_ = absl::Now();
        write = true;
      } else {
        state_ = State::kIdle;
      }
      if (finish) state_ = State::kIdle;
    }
    if (finish) Finish(*finish);
    if (write) StartWrite(&watch_->update());
  }

  grpc::CallbackServerContext* const context_;  // valid until OnDone
  ServiceContext& ctx_;
  WatchRegistry& registry_;
  const v1::WatchRequest request_;
  std::atomic<int> refs_{1};  // gRPC's, dropped in OnDone

  // Set by Begin before the stream is registered; then the view is refreshed by the reader
  // while kReading and its update written while kWriting.
  ConcurrencyLimit::Permit permit_;
  std::unique_ptr<WatchView> watch_;

  absl::Mutex mu_;
  State state_ ABSL_GUARDED_BY(mu_) = State::kIdle;
  absl::Time next_read_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  absl::Time write_started_ ABSL_GUARDED_BY(mu_);
  bool registered_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  bool cancelling_ ABSL_GUARDED_BY(mu_) = false;
  std::optional<grpc::Status> deferred_finish_ ABSL_GUARDED_BY(mu_);
};

WatchRegistry::~WatchRegistry() {
  stop_ticker_.Notify();
  std::thread ticker;
  {
    absl::MutexLock lock(&mu_);
    ticker = std::move(ticker_);
  }
  if (ticker.joinable()) ticker.join();
}

void WatchRegistry::BeginShutdown() {
  absl::MutexLock lock(&mu_);
  shutting_down_ = true;
  for (WatchReactor* reactor : open_) reactor->Stop();
}

absl::Status WatchRegistry::Add(WatchReactor* reactor) {
  absl::MutexLock lock(&mu_);
  if (shutting_down_) return absl::UnavailableError("the daemon is shutting down");
  open_.insert(reactor);
  if (!ticker_.joinable()) ticker_ = std::thread([this] { TickerLoop(); });
  return absl::OkStatus();
}

void WatchRegistry::Remove(WatchReactor* reactor) {
  absl::MutexLock lock(&mu_);
  open_.erase(reactor);
}

void WatchRegistry::TickerLoop() {
  NameCurrentThread("histd-watch");
  std::vector<WatchReactor*> open;
  while (!stop_ticker_.WaitForNotificationWithTimeout(kTick)) {
    open.clear();
    {
      absl::MutexLock lock(&mu_);
      for (WatchReactor* reactor : open_) {
        reactor->Ref();  // alive while ticked, even if it finishes meanwhile
        open.push_back(reactor);
      }
    }
    const absl::Time now = absl::Now();
    for (WatchReactor* reactor : open) {
      reactor->Tick(now);
      reactor->Unref();
    }
  }
}

grpc::ServerWriteReactor<v1::WatchUpdate>* StartWatchStream(grpc::CallbackServerContext* context,
                                                            ServiceContext& ctx,
                                                            WatchRegistry& registry,
                                                            const v1::WatchRequest& request) {
  auto* reactor = new WatchReactor(context, ctx, registry, request);
  reactor->Begin();
  return reactor;
}

}  // namespace histd::server
