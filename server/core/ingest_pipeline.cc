#include "server/core/ingest_pipeline.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "engine/multi_engine.h"

namespace histd::server {

absl::StatusOr<std::unique_ptr<IngestPipeline>> IngestPipeline::Create(
    Engine& engine, const Options::Pipeline& options, metrics::Histogram* batch_samples) {
  // INVALID_ARGUMENT naming the option when `value` < `least`.
  auto at_least = [](const char* name, long long value, long long least) {
    return value >= least ? absl::OkStatus()
                          : absl::InvalidArgumentError(
                                absl::StrFormat("%s must be >= %d, got %d", name, least, value));
  };
  for (absl::Status s :
       {at_least("staging_buffers", options.staging_buffers, 1),
        at_least("staging_buffer_bytes",
                 static_cast<long long>(options.staging_buffer_bytes), 4096),
        at_least("stager_threads", options.stager_threads, 0),
        at_least("acknowledger_threads", options.acknowledger_threads, 0),
        at_least("flush_threads", options.flush_threads, 0),
        at_least("eager_flush_depth", options.eager_flush_depth, 0),
        at_least("stream_read_ahead_bytes",
                 static_cast<long long>(options.stream_read_ahead_bytes), 1)}) {
    if (!s.ok()) return s;
  }
  if (options.flush_deadline < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("flush_deadline must be >= 0");
  }
  const int devices = std::max<int>(1, MultiEngineMembers(engine).size());
  if (options.staging_buffers < devices) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "staging_buffers must be >= the number of devices (%d), got %d: each device stages "
        "into buffers of its own",
        devices, options.staging_buffers));
  }
  std::unique_ptr<IngestPipeline> p(new IngestPipeline());
  if (options.stager_threads > 0) {
    p->stagers_ = std::make_unique<WorkerPool>(options.stager_threads, "histd-stage");
  }
  if (options.acknowledger_threads > 0) {
    p->acknowledgers_ = std::make_unique<WorkerPool>(options.acknowledger_threads, "histd-ack");
  }
  for (int device = 0; device < devices; ++device) {
    Options::Pipeline share = options;
    share.staging_buffers =
        options.staging_buffers / devices + (device < options.staging_buffers % devices ? 1 : 0);
    absl::StatusOr<std::unique_ptr<DeviceIngestPipeline>> pipeline = DeviceIngestPipeline::Create(
        engine, share, batch_samples, p->stagers_.get(), p->acknowledgers_.get());
    if (!pipeline.ok()) return pipeline.status();  // ~IngestPipeline stops the others
    p->devices_.push_back(*std::move(pipeline));
  }
  return p;
}

IngestPipeline::~IngestPipeline() { Shutdown(); }

void IngestPipeline::Submit(Message message, StagedCallback on_staged, AckCallback on_ack) {
  const size_t device = devices_.size() > 1 ? MemberOf(message.histogram->storage()) : 0;
  devices_[device]->Submit(std::move(message), std::move(on_staged), std::move(on_ack));
}

void IngestPipeline::BeginDrain() {
  for (auto& device : devices_) device->BeginDrain();
}

void IngestPipeline::Shutdown() {
  if (shut_down_.exchange(true)) return;
  // Every device refuses new messages before any is waited for.
  for (auto& device : devices_) device->Stop();
  for (auto& device : devices_) device->Join();
  if (stagers_ != nullptr) stagers_->Shutdown();
  if (acknowledgers_ != nullptr) acknowledgers_->Shutdown();
}

IngestStats IngestPipeline::stats() const {
  IngestStats total;
  for (const auto& device : devices_) total += device->stats();
  return total;
}

}  // namespace histd::server
