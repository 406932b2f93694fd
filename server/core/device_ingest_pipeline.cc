#include "server/core/device_ingest_pipeline.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "engine/thread_name.h"
#include "server/core/ingest_validation.h"

namespace histd::server {
namespace {

constexpr size_t kAlignment = 8;  // every part starts 8-aligned: fits both sample kinds

size_t AlignUp(size_t n) { return (n + kAlignment - 1) / kAlignment * kAlignment; }

// The pipeline whose flusher runs on this thread (null on every other thread).
thread_local const void* flusher_of = nullptr;

// Adds the NaN coordinates of `count` staged (x, y) float32 pairs to *nans.
void CountNans(const uint8_t* pairs, size_t count, NanCounts* nans) {
  for (size_t i = 0; i < count; ++i) {
    float xy[2];
    std::memcpy(xy, pairs + 8 * i, 8);
    nans->x += std::isnan(xy[0]);
    nans->y += std::isnan(xy[1]);
  }
}

}  // namespace

// One submitted message, shared by its staged parts. Fields below `count` are guarded by
// the pipeline's mu_.
struct DeviceIngestPipeline::PendingMessage {
  IngestMessage message;
  IngestStagedCallback on_staged;
  IngestAckCallback on_ack;
  uint64_t count = 0;         // samples
  uint64_t outside = 0;       // samples of applied parts that landed in no bin
  size_t bytes = 0;           // payload bytes (the payload itself is released once staged)
  absl::Time scheduled = absl::InfinitePast();  // handed to a stager (stage_wait_seconds)
  absl::Time parked = absl::InfinitePast();     // last parked in waiting_ (park_seconds)
  bool prevalidated = false;  // larger than a staging buffer: checked whole, then split
  size_t staged_bytes = 0;
  int parts_in_flight = 0;
  absl::Status status;
};

// One staging buffer and the message parts reserved in it.
struct DeviceIngestPipeline::Slot {
  struct Part {
    std::shared_ptr<PendingMessage> message;
    size_t byte_offset = 0;
    size_t count = 0;
    NanCounts nans;      // counted while staged (the engine counts a region's); the
                         // engines count them as overflow
    uint64_t cycle = 0;  // its histogram's read-and-reset cycle, set by Flush
  };
  std::unique_ptr<StagingBuffer> buffer;
  size_t used = 0;   // bytes reserved
  int writers = 0;   // copies in progress into reserved space
  bool sealed = false;
  absl::Time ready = absl::InfinitePast();  // sealed with no writer left (flush_wait_seconds)
  absl::Time deadline = absl::InfiniteFuture();
  bool flusher_told = false;  // the flusher was woken for this buffer's deadline
  std::vector<Part> parts;
};

absl::StatusOr<std::unique_ptr<DeviceIngestPipeline>> DeviceIngestPipeline::Create(
    Engine& engine, const Options::Pipeline& options, metrics::Histogram* batch_samples,
    WorkerPool* stagers, WorkerPool* acknowledgers) {
  std::unique_ptr<DeviceIngestPipeline> p(
      new DeviceIngestPipeline(engine, options, batch_samples, stagers, acknowledgers));
  if (options.flush_threads > 0) {
    p->flushers_ = std::make_unique<WorkerPool>(options.flush_threads, "histd-apply");
  }
  for (int i = 0; i < options.staging_buffers; ++i) {
    absl::StatusOr<std::unique_ptr<StagingBuffer>> buffer =
        engine.CreateStagingBuffer(options.staging_buffer_bytes);
    if (!buffer.ok()) return buffer.status();
    auto slot = std::make_unique<Slot>();
    slot->buffer = *std::move(buffer);
    p->slots_.push_back(std::move(slot));
  }
  {
    absl::MutexLock lock(&p->mu_);
    for (auto& slot : p->slots_) p->free_.push_back(slot.get());
    p->stats_.staging_buffers = p->slots_.size();
  }
  p->flusher_ = std::thread([raw = p.get()] {
    NameCurrentThread("histd-flush");
    raw->FlusherLoop();
  });
  return p;
}

DeviceIngestPipeline::DeviceIngestPipeline(Engine& engine, const Options::Pipeline& options,
                                           metrics::Histogram* batch_samples,
                                           WorkerPool* stagers, WorkerPool* acknowledgers)
    : engine_(engine),
      options_(options),
      batch_samples_(batch_samples),
      stagers_(stagers),
      acknowledgers_(acknowledgers) {}

DeviceIngestPipeline::~DeviceIngestPipeline() {
  Stop();
  Join();
}

void DeviceIngestPipeline::Submit(IngestMessage message, IngestStagedCallback on_staged,
                                  IngestAckCallback on_ack) {
  auto m = std::make_shared<PendingMessage>();
  if (message.region != nullptr && message.region->host_region() == nullptr) {
    // This engine does not read regions: stage the samples like a payload.
    message.samples = message.region->Payload(message.region_offset, message.region_bytes);
    message.region = nullptr;
  }
  const size_t bytes =
      message.region != nullptr ? message.region_bytes : message.samples.size();
  m->count = bytes / SampleBytes(message.kind);
  m->bytes = bytes;
  m->message = std::move(message);
  m->on_staged = std::move(on_staged);
  m->on_ack = std::move(on_ack);
  bool stopping;
  {
    absl::MutexLock lock(&mu_);
    stopping = stopping_;
    if (!stopping) {
      ++active_submits_;
      unacknowledged_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  if (stopping) {
    m->on_ack(absl::UnavailableError("histd is shutting down; message not applied"), m->count);
    m->on_staged();
    return;
  }
  if (stagers_ != nullptr && bytes >= options_.stage_inline_below_bytes) {
    m->scheduled = absl::Now();
    stagers_->Schedule([this, m] { SubmitAccepted(m); });
  } else {
    SubmitAccepted(m);
  }
}

void DeviceIngestPipeline::SubmitAccepted(const std::shared_ptr<PendingMessage>& m) {
  const double waited =
      m->scheduled == absl::InfinitePast() ? 0.0 : absl::ToDoubleSeconds(absl::Now() - m->scheduled);
  const size_t bytes = m->bytes;
  HistogramEntry& entry = *m->message.histogram;
  absl::Status status = CheckIngestMessage(entry.spec(), m->message.kind, bytes);
  if (status.ok() && m->message.region != nullptr) {
    // Never split (one item), and validated by the engine as it applies it (Engine::Apply).
    if (bytes > options_.staging_buffer_bytes) {
      status = absl::ResourceExhaustedError(absl::StrFormat(
          "a shared-memory message of %d bytes is larger than --staging_buffer_bytes=%d; "
          "split it (nothing of it was applied)",
          bytes, options_.staging_buffer_bytes));
    }
  } else if (status.ok() && bytes > options_.staging_buffer_bytes) {
    status = CopyValidatedPayload(entry.spec(), m->message.kind, m->message.samples, 0, m->count,
                                  nullptr);  // NaNs are counted per part, as staged
    m->prevalidated = true;
  }
  bool staged = true;
  if (!status.ok()) {
    Reject(m, std::move(status));
  } else if (bytes == 0) {  // valid and applies nothing
    entry.RecordApplied(1, 0, IngestItemResult{});
    {
      absl::MutexLock lock(&mu_);
      stats_.messages += 1;
    }
    Acknowledge(m, absl::OkStatus());
  } else {
    staged = StageOrPark(m, /*resume=*/false);
  }
  {
    absl::MutexLock lock(&mu_);
    stats_.stage_wait_seconds += waited;
    --active_submits_;
    // Only a stopping flusher waits for active_submits_ (not a wakeup per message).
    if (active_submits_ == 0 && stopping_) flusher_cv_.Signal();
  }
  if (staged) m->on_staged();
}

void DeviceIngestPipeline::Reject(const std::shared_ptr<PendingMessage>& m, absl::Status status) {
  m->message.histogram->RecordRejected(m->count);
  Acknowledge(m, std::move(status));
}

void DeviceIngestPipeline::Acknowledge(const std::shared_ptr<PendingMessage>& m,
                                       absl::Status status) {
  unacknowledged_.fetch_sub(1, std::memory_order_relaxed);
  m->on_ack(std::move(status), m->count);
}

bool DeviceIngestPipeline::StageOrPark(const std::shared_ptr<PendingMessage>& m, bool resume) {
  const size_t element = SampleBytes(m->message.kind);
  const size_t total = m->bytes;
  const size_t capacity = options_.staging_buffer_bytes;
  const SamplePayload& payload = m->message.samples;
  while (true) {
    Slot* slot = nullptr;
    size_t offset = 0, take = 0;
    std::vector<Slot*> ready;
    bool parked = false;
    std::vector<std::shared_ptr<PendingMessage>> resumes;
    {
      absl::MutexLock lock(&mu_);
      while (true) {
        // First come, first staged: behind parked messages, a new one parks too.
        if (!resume && !waiting_.empty()) {
          parked = true;
          break;
        }
        if (current_ == nullptr && !free_.empty()) {
          current_ = free_.back();
          free_.pop_back();
        }
        if (current_ == nullptr) {
          parked = true;
          break;
        }
        slot = current_;
        const size_t remaining = total - m->staged_bytes;
        const size_t start = AlignUp(slot->used);
        const size_t avail = start < capacity ? capacity - start : 0;
        take = std::min(remaining, avail / element * element);
        if ((!m->prevalidated && remaining > avail) || take == 0) {
          // A message that fits a fresh buffer is never split.
          SealLocked(slot);
          slot = nullptr;
          continue;
        }
        offset = start;
        slot->used = start + take;
        slot->writers += 1;
        if (slot->parts.empty() && slot->deadline == absl::InfiniteFuture()) {
          slot->deadline = absl::Now() + options_.flush_deadline;  // see SealOrTellLocked
        }
        break;
      }
      if (parked) {
        m->parked = absl::Now();
        if (resume) {
          waiting_.push_front(m);
        } else {
          waiting_.push_back(m);
        }
        stats_.parked_messages += resume ? 0 : 1;
        resumes = TakeResumesLocked();
      }
      ready = TakeReadyLocked();
    }
    DispatchFlushes(std::move(ready));
    if (parked) {
      ScheduleResumes(std::move(resumes));
      return false;
    }
    // Copy outside the lock; other producers copy into other reserved ranges meanwhile.
    uint8_t* dst = slot->buffer->data() + offset;
    const size_t from = m->staged_bytes;  // staged_bytes only changes below, by us
    absl::Status status;
    NanCounts nans;
    const absl::Time copy_started = absl::Now();
    if (m->message.region != nullptr) {
      // Nothing to copy: the engine reads (and validates) the region.
    } else if (m->prevalidated) {
      payload.CopyTo(from, take, dst);
      if (m->message.kind == SampleKind::kCoordXY) CountNans(dst, take / element, &nans);
    } else {
      status = CopyValidatedPayload(m->message.histogram->spec(), m->message.kind, payload,
                                    from / element, take / element, dst,
                                    options_.staging_stores, &nans);
    }
    const double copy_seconds = absl::ToDoubleSeconds(absl::Now() - copy_started);
    {
      absl::MutexLock lock(&mu_);
      stats_.stage_seconds += copy_seconds;
      slot->writers -= 1;
      if (status.ok()) {
        slot->parts.push_back(Slot::Part{m, offset, take / element, nans});
        m->parts_in_flight += 1;
        m->staged_bytes += take;
      }  // else: the reserved range stays unused; nothing of the message is in any part
      if (slot == current_) {
        if (capacity - std::min(capacity, AlignUp(slot->used)) < 4) {
          SealLocked(slot);
        } else {
          SealOrTellLocked(slot);
        }
      }
      ready = TakeReadyLocked();
    }
    DispatchFlushes(std::move(ready));
    if (!status.ok()) {
      Reject(m, std::move(status));
      return true;
    }
    if (m->staged_bytes == total) {
      // Every byte is in staging: give the receive buffers back before the acknowledgement.
      m->message.samples = SamplePayload();
      return true;
    }
  }
}

void DeviceIngestPipeline::SealLocked(Slot* slot) {
  slot->sealed = true;
  if (slot == current_) current_ = nullptr;
  sealed_.push_back(slot);
  // Whoever seals takes the ready slots next (TakeReadyLocked, which wakes the flusher when
  // only it may apply them).
}

bool DeviceIngestPipeline::EagerLocked() const {
  return stopping_ || draining_ || in_flight_ < options_.eager_flush_depth;
}

void DeviceIngestPipeline::SealOrTellLocked(Slot* slot) {
  if (slot->used == 0) return;
  if (EagerLocked()) {
    SealLocked(slot);
  } else if (!slot->flusher_told) {
    slot->flusher_told = true;
    flusher_cv_.Signal();  // it seals the buffer at its deadline
  }
}

bool DeviceIngestPipeline::HasRoomLocked() const {
  return current_ != nullptr || !free_.empty();
}

std::vector<DeviceIngestPipeline::Slot*> DeviceIngestPipeline::TakeReadyLocked() {
  std::vector<Slot*> ready;
  const absl::Time now = absl::Now();
  for (auto it = sealed_.begin(); it != sealed_.end();) {
    Slot* slot = *it;
    if (slot->writers != 0) {
      ++it;
      continue;
    }
    if (slot->ready == absl::InfinitePast()) slot->ready = now;
    if (flushers_ == nullptr && flusher_of != this) {
      flusher_cv_.Signal();  // only the flusher applies without flush threads
      ++it;
      continue;
    }
    it = sealed_.erase(it);
    in_flight_ += 1;
    flushing_ += 1;
    stats_.flush_wait_seconds += absl::ToDoubleSeconds(now - slot->ready);
    ready.push_back(slot);
  }
  return ready;
}

void DeviceIngestPipeline::DispatchFlushes(std::vector<Slot*> slots) {
  for (Slot* slot : slots) {
    if (flushers_ != nullptr) {
      flushers_->Schedule([this, slot] { Flush(slot); });
    } else {
      Flush(slot);  // the flusher thread (TakeReadyLocked)
    }
  }
}

std::vector<std::shared_ptr<DeviceIngestPipeline::PendingMessage>>
DeviceIngestPipeline::TakeResumesLocked() {
  std::vector<std::shared_ptr<PendingMessage>> resumes;
  if (stagers_ == nullptr) {
    if (!waiting_.empty()) flusher_cv_.Signal();  // the flusher resumes them one at a time
    return resumes;
  }
  const absl::Time now = absl::Now();
  while (!waiting_.empty() && HasRoomLocked() &&
         resuming_ < options_.stager_threads) {
    stats_.park_seconds += absl::ToDoubleSeconds(now - waiting_.front()->parked);
    resumes.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
    resuming_ += 1;
  }
  return resumes;
}

void DeviceIngestPipeline::ScheduleResumes(std::vector<std::shared_ptr<PendingMessage>> messages) {
  for (auto& m : messages) {
    stagers_->Schedule([this, m = std::move(m)] { Resume(m); });
  }
}

void DeviceIngestPipeline::FlusherLoop() {
  flusher_of = this;
  while (true) {
    std::vector<Slot*> to_flush;
    std::shared_ptr<PendingMessage> to_stage;
    {
      absl::MutexLock lock(&mu_);
      while (true) {
        to_flush = TakeReadyLocked();
        if (!to_flush.empty()) break;
        if (stagers_ == nullptr && !waiting_.empty() && HasRoomLocked() && resuming_ == 0) {
          to_stage = std::move(waiting_.front());
          waiting_.pop_front();
          stats_.park_seconds += absl::ToDoubleSeconds(absl::Now() - to_stage->parked);
          resuming_ += 1;
          break;
        }
        bool has_data = false;
        absl::Time deadline = absl::InfiniteFuture();
        if (current_ != nullptr && current_->used != 0) {
          if (EagerLocked() || absl::Now() >= current_->deadline) {
            SealLocked(current_);
            continue;
          }
          has_data = true;
          deadline = current_->deadline;
        }
        if (stopping_ && !has_data && sealed_.empty() && waiting_.empty() && in_flight_ == 0 &&
            completing_ == 0 && active_submits_ == 0 && resuming_ == 0 && flushing_ == 0) {
          return;
        }
        flusher_cv_.WaitWithDeadline(&mu_, deadline);
      }
    }
    DispatchFlushes(std::move(to_flush));
    if (to_stage != nullptr) Resume(to_stage);  // no stagers: on this thread
  }
}

void DeviceIngestPipeline::Resume(const std::shared_ptr<PendingMessage>& m) {
  const bool staged = StageOrPark(m, /*resume=*/true);
  std::vector<std::shared_ptr<PendingMessage>> resumes;
  {
    absl::MutexLock lock(&mu_);
    resuming_ -= 1;
    resumes = TakeResumesLocked();
    flusher_cv_.Signal();
  }
  ScheduleResumes(std::move(resumes));
  if (staged) m->on_staged();
}

void DeviceIngestPipeline::Flush(Slot* slot) {
  // Only the flusher and then OnApplied touch a slot between sealing and freeing it.
  std::vector<IngestItem> items;
  items.reserve(slot->parts.size());
  for (const Slot::Part& part : slot->parts) {
    const HistogramSpec& spec = part.message->message.histogram->spec();
    IngestItem item;
    item.histogram = &part.message->message.histogram->storage();
    item.kind = part.message->message.kind;
    item.byte_offset = part.byte_offset;
    item.count = part.count;
    if (item.kind == SampleKind::kCoordXY) {
      item.x = *spec.x_axis;
      item.y = *spec.y_axis;
    }
    if (const ShmRegion* region = part.message->message.region.get()) {
      item.region = region->host_region();  // a region message is one part: the whole of it
      item.region_offset = part.message->message.region_offset;
    }
    items.push_back(item);
  }
  const absl::Time started = absl::Now();
  if (items.empty()) {  // every reservation in it was rejected
    OnApplied(slot, started, absl::OkStatus(), {});
  } else {
    // No read-and-reset of these histograms runs while the batch is handed over, so each
    // part's bins land in the cycle BeginApply names (HistogramEntry, "Cycles").
    std::vector<std::shared_ptr<HistogramEntry>> entries;
    entries.reserve(slot->parts.size());
    for (const Slot::Part& part : slot->parts) entries.push_back(part.message->message.histogram);
    ApplyOrderLock order(std::move(entries));
    for (Slot::Part& part : slot->parts) part.cycle = part.message->message.histogram->BeginApply();
    engine_.Apply(*slot->buffer, std::move(items),
                  [this, slot, started](absl::Status status, std::vector<IngestItemResult> results) {
                    OnApplied(slot, started, std::move(status), std::move(results));
                  });
  }
  const double enqueue = absl::ToDoubleSeconds(absl::Now() - started);
  absl::MutexLock lock(&mu_);
  stats_.enqueue_seconds += enqueue;
  flushing_ -= 1;
  if (stopping_) flusher_cv_.Signal();  // only a stopping flusher waits for flushing_
}

void DeviceIngestPipeline::OnApplied(Slot* slot, absl::Time started, absl::Status status,
                                     std::vector<IngestItemResult> results) {
  const absl::Time done = absl::Now();
  std::vector<std::shared_ptr<PendingMessage>> completed;
  std::vector<std::shared_ptr<PendingMessage>> resumes;
  std::vector<Slot*> ready;
  {
    absl::MutexLock lock(&mu_);
    if (status.ok() && results.size() != slot->parts.size()) {
      status = absl::InternalError(absl::StrFormat(
          "engine returned %d results for %d ingest items", results.size(), slot->parts.size()));
    }
    for (size_t i = 0; i < slot->parts.size(); ++i) {
      const std::shared_ptr<PendingMessage>& m = slot->parts[i].message;
      m->parts_in_flight -= 1;
      if (!status.ok() && m->status.ok()) m->status = status;
      // Counted in the cycle that holds the part's bins, before any acknowledgement; a
      // message in the cycle of its last part. NaNs move from the overflows to their own.
      const bool last = m->parts_in_flight == 0 && m->staged_bytes == m->bytes;
      const Slot::Part& part = slot->parts[i];
      const bool in_region = m->message.region != nullptr;  // the engine validated it
      const bool applied = status.ok() && results[i].invalid == 0;
      IngestItemResult result;
      if (status.ok() && results[i].invalid > 0 && m->status.ok()) {
        m->status = BinIndexOutOfRangeError(m->message.histogram->spec(),
                                            results[i].first_invalid,
                                            results[i].first_invalid_value);
      }
      if (status.ok() && results[i].out_of_range > 0 && m->status.ok()) {
        m->status = absl::InternalError(absl::StrFormat(
            "%d bin indices were out of range when applied (not binned where they point): "
            "the shared-memory region changed after this message was validated; write only "
            "parts whose messages are acknowledged",
            results[i].out_of_range));
      }
      if (applied) {
        result = results[i];
        const NanCounts nans = in_region ? NanCounts{result.x_nan, result.y_nan} : part.nans;
        result.x_overflow -= std::min(nans.x, result.x_overflow);
        result.y_overflow -= std::min(nans.y, result.y_overflow);
        result.x_nan = nans.x;
        result.y_nan = nans.y;
        m->outside += part.count - std::min<uint64_t>(result.binned, part.count);
      }
      m->message.histogram->EndApply(part.cycle, part.count, applied ? &result : nullptr,
                                     last && m->status.ok() ? 1 : 0);
      if (last) completed.push_back(m);
    }
    if (!slot->parts.empty()) {
      stats_.batches += 1;
      stats_.apply_seconds += absl::ToDoubleSeconds(absl::Now() - started);
      if (batch_samples_ != nullptr) {
        uint64_t samples = 0;
        for (const Slot::Part& part : slot->parts) samples += part.count;
        batch_samples_->Observe(static_cast<int64_t>(samples));
      }
    }
    for (const auto& m : completed) {
      if (m->status.ok()) {
        stats_.messages += 1;
        stats_.samples += m->count;
        stats_.samples_outside += m->outside;
        stats_.bytes += m->bytes;
      }
    }
    slot->parts.clear();
    slot->used = 0;
    slot->sealed = false;
    slot->ready = absl::InfinitePast();
    slot->deadline = absl::InfiniteFuture();
    slot->flusher_told = false;
    free_.push_back(slot);
    in_flight_ -= 1;
    completing_ += 1;  // Shutdown waits for the acknowledgements below, not just the slot
    if (flushers_ == nullptr) {
      flusher_cv_.Signal();  // only the flusher applies (and this may be its own Apply)
    } else {
      // A batch slot of this device is free: what its current buffer holds goes now, from
      // here rather than through a wakeup of the flusher.
      if (current_ != nullptr) SealOrTellLocked(current_);
      ready = TakeReadyLocked();
      if (stopping_) flusher_cv_.Signal();  // a stopping flusher waits for in_flight_
    }
    resumes = TakeResumesLocked();
  }
  DispatchFlushes(std::move(ready));
  ScheduleResumes(std::move(resumes));
  auto acknowledge = [this, completed = std::move(completed), done] {
    for (const auto& m : completed) Complete(m);
    const double seconds = absl::ToDoubleSeconds(absl::Now() - done);
    absl::MutexLock lock(&mu_);
    stats_.acknowledge_seconds += seconds;
    completing_ -= 1;
    if (stopping_) flusher_cv_.Signal();  // only a stopping flusher waits for completing_
  };
  if (acknowledgers_ != nullptr) {
    acknowledgers_->Schedule(std::move(acknowledge));
  } else {
    acknowledge();
  }
}

void DeviceIngestPipeline::Complete(const std::shared_ptr<PendingMessage>& m) {
  HistogramEntry& entry = *m->message.histogram;
  // parts_in_flight reached 0 under mu_: no other thread touches status any more.
  // Applied parts were counted as their batches finished (OnApplied); a failed message's
  // samples count as rejected (after an engine failure, parts it applied count as applied too).
  if (!m->status.ok()) entry.RecordRejected(m->count);
  Acknowledge(m, m->status);
}

void DeviceIngestPipeline::BeginDrain() {
  absl::MutexLock lock(&mu_);
  draining_ = true;
  flusher_cv_.Signal();
}

void DeviceIngestPipeline::Stop() {
  absl::MutexLock lock(&mu_);
  stopping_ = true;
  flusher_cv_.Signal();
}

void DeviceIngestPipeline::Join() {
  if (flusher_.joinable()) flusher_.join();
  // All idle by now: the flusher waited for them (resuming_, flushing_, completing_), so no
  // task in the shared stager and acknowledger pools touches this pipeline any more (their
  // last steps may still run; IngestPipeline shuts those pools down after every Join).
  if (flushers_ != nullptr) flushers_->Shutdown();
}

IngestStats DeviceIngestPipeline::stats() const {
  absl::MutexLock lock(&mu_);
  IngestStats s = stats_;
  s.staging_buffers_in_flight = in_flight_;
  s.queued_messages = waiting_.size();
  s.unacknowledged_messages = unacknowledged_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace histd::server
