#include "server/core/histogram_store.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"

namespace histd::server {
namespace {

constexpr size_t kMaxNameLength = 128;

bool IsNameChar(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == '-';
}

absl::Status ValidateAxis(const char* which, const AxisRange& axis) {
  if (!std::isfinite(axis.lo) || !std::isfinite(axis.hi)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s_axis must be finite, got [%g, %g)", which, axis.lo, axis.hi));
  }
  if (!(axis.lo < axis.hi)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s_axis needs lo < hi, got [%g, %g)", which, axis.lo, axis.hi));
  }
  return absl::OkStatus();
}

}  // namespace

HistogramEntry::HistogramEntry(HistogramSpec spec, std::unique_ptr<HistogramStorage> storage,
                               MemoryCharge charge)
    : spec_(std::move(spec)), storage_(std::move(storage)), charge_(std::move(charge)) {}

IngestCounters HistogramEntry::counters() const {
  absl::MutexLock lock(&mu_);
  return counters_[cycle_ & 1];
}

namespace {

// Adds one part's (or message's) outcome: `samples` samples of which result.binned are in bins.
void Count(IngestCounters& c, uint64_t messages, uint64_t samples, const IngestItemResult& result) {
  c.messages_applied += messages;
  c.samples_applied += result.binned;
  c.samples_outside += samples - result.binned;
  c.x_underflow += result.x_underflow;
  c.x_overflow += result.x_overflow;
  c.y_underflow += result.y_underflow;
  c.y_overflow += result.y_overflow;
  c.x_nan += result.x_nan;
  c.y_nan += result.y_nan;
}

}  // namespace

void HistogramEntry::RecordApplied(uint64_t messages, uint64_t samples,
                                   const IngestItemResult& result) {
  absl::MutexLock lock(&mu_);
  Count(Open(), messages, samples, result);
}

void HistogramEntry::RecordRejected(uint64_t samples) {
  absl::MutexLock lock(&mu_);
  Open().messages_rejected += 1;
  Open().samples_rejected += samples;
}

void HistogramEntry::RestoreCounters(const IngestCounters& counters) {
  absl::MutexLock lock(&mu_);
  Open() = counters;
}

uint64_t HistogramEntry::BeginApply() {
  absl::MutexLock lock(&mu_);
  pending_[cycle_ & 1] += 1;
  return cycle_;
}

void HistogramEntry::EndApply(uint64_t cycle, uint64_t samples, const IngestItemResult* result,
                              uint64_t messages) {
  absl::MutexLock lock(&mu_);
  // `cycle` is the open one or the one being closed (reset_mu_ keeps at most two live, and
  // the closing one ends only after this call).
  if (result != nullptr) Count(counters_[cycle & 1], messages, samples, *result);
  pending_[cycle & 1] -= 1;
}

absl::StatusOr<IngestCounters> HistogramEntry::EndCycle(Engine& engine, void* out) {
  absl::MutexLock serial(&reset_mu_);
  uint64_t closing;
  {
    // No batch with parts of this histogram is being handed to the engine: every part begun
    // so far has its bins in `out`, every part begun later lands in the zeroed bins.
    absl::MutexLock order(&order_mu_);
    const absl::Status s =
        out != nullptr ? engine.ReadAndReset(*storage_, out) : engine.Reset(*storage_);
    if (!s.ok()) return s;
    absl::MutexLock lock(&mu_);
    closing = cycle_++;
  }
  absl::MutexLock lock(&mu_);
  // The parts of the closing cycle still in flight are done soon: their batches are already
  // with the engine (nothing here waits for a lock their completion needs).
  const uint64_t* pending = &pending_[closing & 1];
  mu_.Await(absl::Condition(
      +[](const uint64_t* p) { return *p == 0; }, pending));
  IngestCounters counters = counters_[closing & 1];
  counters_[closing & 1] = IngestCounters{};  // the slot of the cycle after the open one
  return counters;
}

absl::StatusOr<IngestCounters> HistogramEntry::ReadAndReset(Engine& engine, void* out) {
  if (out == nullptr) return absl::InvalidArgumentError("read and reset: no output buffer");
  return EndCycle(engine, out);
}

absl::Status HistogramEntry::Reset(Engine& engine) { return EndCycle(engine, nullptr).status(); }

ApplyOrderLock::ApplyOrderLock(std::vector<std::shared_ptr<HistogramEntry>> entries)
    : locked_(std::move(entries)) {
  std::sort(locked_.begin(), locked_.end());  // by address (shared_ptr's operator<)
  locked_.erase(std::unique(locked_.begin(), locked_.end()), locked_.end());
  for (const std::shared_ptr<HistogramEntry>& e : locked_) e->order_mu_.Lock();
}

ApplyOrderLock::~ApplyOrderLock() {
  for (auto it = locked_.rbegin(); it != locked_.rend(); ++it) (*it)->order_mu_.Unlock();
}

HistogramStore::HistogramStore(Engine& engine, uint32_t max_histograms,
                               uint64_t max_bins_per_histogram, MemoryBudget* budget)
    : engine_(engine),
      budget_(budget),
      max_histograms_(max_histograms),
      max_bins_(max_bins_per_histogram) {}

absl::Status HistogramStore::ValidateName(absl::string_view name) {
  if (name.empty()) return absl::InvalidArgumentError("histogram name is empty");
  if (name.size() > kMaxNameLength) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "histogram name has %d characters; at most %d allowed", name.size(), kMaxNameLength));
  }
  for (size_t i = 0; i < name.size(); ++i) {
    if (!IsNameChar(name[i])) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "histogram name '%s' has character 0x%02x at position %d; allowed: A-Z a-z 0-9 . _ -",
          absl::CHexEscape(name), static_cast<unsigned char>(name[i]), i));
    }
  }
  return absl::OkStatus();
}

absl::Status HistogramStore::ValidateSpec(const HistogramSpec& spec) const {
  if (absl::Status s = ValidateName(spec.name); !s.ok()) return s;
  // The limit first: a shape above it is refused as a limit whatever else is wrong with it.
  if (spec.shape.bins() > max_bins_) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "histogram '%s': %d x %d = %d bins exceeds --max_bins_per_histogram=%d", spec.name,
        spec.shape.rows, spec.shape.cols, spec.shape.bins(), max_bins_));
  }
  if (absl::Status s = CheckHistogramShape(spec.shape); !s.ok()) {
    return absl::Status(s.code(), absl::StrFormat("histogram '%s': %s", spec.name, s.message()));
  }
  if (spec.x_axis) {
    if (absl::Status s = ValidateAxis("x", *spec.x_axis); !s.ok()) return s;
  }
  if (spec.y_axis) {
    if (absl::Status s = ValidateAxis("y", *spec.y_axis); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<HistogramEntry>> HistogramStore::Create(const HistogramSpec& spec) {
  if (absl::Status s = ValidateSpec(spec); !s.ok()) return s;
  auto check_room = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) -> absl::Status {
    if (entries_.count(spec.name) != 0) {
      return absl::AlreadyExistsError(absl::StrFormat("histogram '%s' already exists", spec.name));
    }
    if (entries_.size() >= max_histograms_) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "cannot create '%s': %d histograms exist, --max_histograms=%d", spec.name,
          entries_.size(), max_histograms_));
    }
    return absl::OkStatus();
  };
  {
    absl::MutexLock lock(&mu_);
    if (absl::Status s = check_room(); !s.ok()) return s;
  }
  MemoryCharge charge;
  if (budget_ != nullptr) {
    absl::StatusOr<MemoryCharge> charged = budget_->Charge(
        spec.shape.storage_bytes(),
        absl::StrFormat("histogram '%s' (%u x %u bins)", spec.name, spec.shape.rows,
                        spec.shape.cols));
    if (!charged.ok()) return charged.status();
    charge = *std::move(charged);
  }
  // Allocate outside the lock (device allocation can be slow), then check again.
  absl::StatusOr<std::unique_ptr<HistogramStorage>> storage = engine_.CreateHistogram(spec.shape);
  if (!storage.ok()) {
    const absl::Status& s = storage.status();
    if (s.code() != absl::StatusCode::kResourceExhausted) return s;
    return absl::ResourceExhaustedError(
        absl::StrFormat("cannot create '%s': %s", spec.name, s.message()));
  }
  auto entry = std::make_shared<HistogramEntry>(spec, *std::move(storage), std::move(charge));
  absl::MutexLock lock(&mu_);
  if (absl::Status s = check_room(); !s.ok()) return s;
  entries_.emplace(spec.name, entry);
  return entry;
}

absl::Status HistogramStore::Delete(absl::string_view name) {
  if (absl::Status s = ValidateName(name); !s.ok()) return s;
  std::shared_ptr<HistogramEntry> removed;  // released outside the lock
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    return absl::NotFoundError(absl::StrFormat("histogram '%s' not found", name));
  }
  removed = std::move(it->second);
  entries_.erase(it);
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<HistogramEntry>> HistogramStore::Find(absl::string_view name) const {
  if (absl::Status s = ValidateName(name); !s.ok()) return s;
  absl::MutexLock lock(&mu_);
  auto it = entries_.find(name);
  if (it == entries_.end()) {
    return absl::NotFoundError(absl::StrFormat("histogram '%s' not found", name));
  }
  return it->second;
}

absl::StatusOr<std::shared_ptr<HistogramEntry>> HistogramStore::Merge(absl::string_view source,
                                                                      absl::string_view target) {
  if (absl::Status s = ValidateName(source); !s.ok()) return s;
  if (absl::Status s = ValidateName(target); !s.ok()) return s;
  if (source == target) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "cannot merge '%s' into itself; merge it into another histogram", source));
  }
  absl::StatusOr<std::shared_ptr<HistogramEntry>> s = Find(source);
  if (!s.ok()) return s.status();
  absl::StatusOr<std::shared_ptr<HistogramEntry>> t = Find(target);
  if (!t.ok()) return t.status();
  const HistogramShape& ss = (*s)->spec().shape;
  const HistogramShape& ts = (*t)->spec().shape;
  if (ss.rows != ts.rows || ss.cols != ts.cols) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "cannot merge '%s' (%d x %d) into '%s' (%d x %d): shapes differ", source, ss.rows,
        ss.cols, target, ts.rows, ts.cols));
  }
  if (absl::Status st = engine_.Merge((*s)->storage(), (*t)->storage()); !st.ok()) return st;
  return *std::move(t);
}

std::vector<std::shared_ptr<HistogramEntry>> HistogramStore::List() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::shared_ptr<HistogramEntry>> out;
  out.reserve(entries_.size());
  for (const auto& [name, entry] : entries_) out.push_back(entry);
  return out;
}

size_t HistogramStore::size() const {
  absl::MutexLock lock(&mu_);
  return entries_.size();
}

}  // namespace histd::server
