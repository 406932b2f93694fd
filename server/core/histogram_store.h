// The resident histograms of one daemon, by name, and their ingest counters.
//
// Contract: names match [A-Za-z0-9._-]{1,128}; a histogram's spec is fixed at creation.
// Codes: bad field INVALID_ARGUMENT, duplicate name ALREADY_EXISTS, unknown name NOT_FOUND,
// over --max_histograms, --max_bins_per_histogram or the memory budget RESOURCE_EXHAUSTED.
// Entries are shared: Delete removes a name, while an ingest batch or a query that still
// holds the entry keeps its storage alive until it finishes (deletion is safe under load).
// Knows nothing of gRPC.
//
// Thread safety: HistogramStore and HistogramEntry are safe to use from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "engine/engine.h"
#include "model/histogram_types.h"
#include "server/core/memory_budget.h"

namespace histd::server {

struct HistogramSpec {
  std::string name;
  HistogramShape shape;
  std::optional<AxisRange> x_axis;  // over columns
  std::optional<AxisRange> y_axis;  // over rows
  bool has_both_axes() const { return x_axis.has_value() && y_axis.has_value(); }
};

// What ingest did to one histogram (see HistogramInfo in histograms.proto).
struct IngestCounters {
  uint64_t samples_applied = 0;
  uint64_t samples_rejected = 0;
  uint64_t messages_applied = 0;
  uint64_t messages_rejected = 0;
  uint64_t x_underflow = 0;
  uint64_t x_overflow = 0;
  uint64_t y_underflow = 0;
  uint64_t y_overflow = 0;
  uint64_t samples_outside = 0;
  uint64_t x_nan = 0;
  uint64_t y_nan = 0;
};

// One histogram: its spec, its storage and its ingest counters, counted by cycle.
//
// Cycles. A read-and-reset (ReadAndReset, Reset) ends the histogram's current cycle and
// opens the next. The ingest pipeline hands each batch to the engine under the apply-order
// lock of every histogram in it (ApplyOrderLock), which also tags each part with the cycle
// its bins land in; a read-and-reset takes the same lock around the engine's ReadAndReset,
// so a part's bins are in the bins returned by the read-and-reset that ends its cycle, and
// in no other. Each part's counters are recorded in its cycle (EndApply) when its batch is
// done, before any of its messages is acknowledged; a read-and-reset returns its cycle's
// counters only once every part of that cycle is recorded. Hence:
//   the counters a read-and-reset returns count exactly the samples whose bins it returns
//   (samples_applied, samples_outside and the per-axis counters of those parts), and
//   messages_applied counts the messages whose last part is among them; every message
//   acknowledged OK before the read-and-reset began is counted in it or an earlier cycle.
// Rejections and empty messages have no bins: they count in the cycle open when recorded.
//
// Thread safety: every method may be called from any thread. Lock order: reset_mu_, then
// order_mu_, then mu_; EndApply and the Record* methods take mu_ alone.
class HistogramEntry {
 public:
  // `charge`: the storage's bytes held against a memory budget for as long as the entry lives.
  HistogramEntry(HistogramSpec spec, std::unique_ptr<HistogramStorage> storage,
                 MemoryCharge charge = MemoryCharge());

  const HistogramSpec& spec() const { return spec_; }
  const std::string& name() const { return spec_.name; }
  // The engine's operations are thread-safe; the entry only owns the storage.
  HistogramStorage& storage() const { return *storage_; }

  // The open cycle's counters: everything since the last read-and-reset (or restore).
  IngestCounters counters() const;
  // One message of `samples` samples without bins in any cycle (an empty message), counted in
  // the open cycle. Messages with bins are recorded part by part (BeginApply / EndApply).
  void RecordApplied(uint64_t messages, uint64_t samples, const IngestItemResult& result);
  void RecordRejected(uint64_t samples);
  // Replaces the open cycle's counters (restoring a snapshot).
  void RestoreCounters(const IngestCounters& counters);

  // The ingest side of cycles. BeginApply: called for each part of a batch while an
  // ApplyOrderLock holds this entry, before the batch reaches the engine; returns the
  // part's cycle. EndApply: exactly once per BeginApply, when the batch is done (before any
  // acknowledgement): `result` null when the engine failed the batch (nothing is counted),
  // else the part's `samples`, its result, and `messages` (1 when it completes a message
  // that applied, else 0) are counted in `cycle`.
  uint64_t BeginApply();
  void EndApply(uint64_t cycle, uint64_t samples, const IngestItemResult* result,
                uint64_t messages);

  // Atomically reads every bin into `out` (rows * cols bytes, host memory) and zeroes the
  // bins and counters, through the engine's ReadAndReset; returns the counters of the cycle
  // it ends (see the class comment). Waits for the batches of that cycle still in flight.
  // On an engine error nothing is reset on the entry's side (the bins are unspecified).
  absl::StatusOr<IngestCounters> ReadAndReset(Engine& engine, void* out);
  // The same without reading: zeroes bins and counters (Engine::Reset).
  absl::Status Reset(Engine& engine);

 private:
  friend class ApplyOrderLock;
  absl::StatusOr<IngestCounters> EndCycle(Engine& engine, void* out);
  IngestCounters& Open() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return counters_[cycle_ & 1]; }

  const HistogramSpec spec_;
  const std::unique_ptr<HistogramStorage> storage_;
  const MemoryCharge charge_;
  absl::Mutex reset_mu_;  // one read-and-reset at a time: at most two cycles live
  absl::Mutex order_mu_;  // batches handed to the engine vs. read-and-reset (ApplyOrderLock)
  mutable absl::Mutex mu_;
  uint64_t cycle_ ABSL_GUARDED_BY(mu_) = 0;
  // By cycle parity: the open cycle and the one a read-and-reset is closing.
  IngestCounters counters_[2] ABSL_GUARDED_BY(mu_);
  uint64_t pending_[2] ABSL_GUARDED_BY(mu_) = {0, 0};  // parts begun, not yet ended
};

// Holds the apply-order locks of the histograms of one batch while it is handed to the
// engine (Engine::Apply), so that no read-and-reset of them runs meanwhile. The pipeline's
// flush threads each hold several at once, always taken in address order (a read-and-reset
// takes one), so they cannot deadlock. It shares ownership of the entries: the engine may call the
// batch's `done` inline, whose acknowledgements let a client delete a histogram of the batch
// before the lock is released, and the locks must outlive that.
class ApplyOrderLock {
 public:
  explicit ApplyOrderLock(std::vector<std::shared_ptr<HistogramEntry>> entries);
  ~ApplyOrderLock();
  ApplyOrderLock(const ApplyOrderLock&) = delete;
  ApplyOrderLock& operator=(const ApplyOrderLock&) = delete;

 private:
  std::vector<std::shared_ptr<HistogramEntry>> locked_;  // distinct, ascending addresses
};

class HistogramStore {
 public:
  // Histograms' bins (HistogramShape::storage_bytes()) are charged to `budget` before they
  // are allocated: beyond it Create is RESOURCE_EXHAUSTED. Null: no budget here (an engine
  // with devices reserves them against its device's budget itself: Engine::CreateHistogram).
  HistogramStore(Engine& engine, uint32_t max_histograms, uint64_t max_bins_per_histogram,
                 MemoryBudget* budget = nullptr);


  absl::StatusOr<std::shared_ptr<HistogramEntry>> Create(const HistogramSpec& spec);
  absl::Status Delete(absl::string_view name);
  absl::StatusOr<std::shared_ptr<HistogramEntry>> Find(absl::string_view name) const;
  // Adds every bin of `source` into `target`, saturating at target's cap; returns the target.
  // INVALID_ARGUMENT when the names are equal (a histogram is never merged into itself) or
  // the shapes (rows, cols) differ; NOT_FOUND for an unknown name. Counters are unchanged.
  absl::StatusOr<std::shared_ptr<HistogramEntry>> Merge(absl::string_view source,
                                                        absl::string_view target);
  // Every entry, sorted by name.
  std::vector<std::shared_ptr<HistogramEntry>> List() const;
  size_t size() const;

  // INVALID_ARGUMENT unless the name matches [A-Za-z0-9._-]{1,128}.
  static absl::Status ValidateName(absl::string_view name);

 private:
  absl::Status ValidateSpec(const HistogramSpec& spec) const;

  Engine& engine_;
  MemoryBudget* const budget_;
  const uint32_t max_histograms_;
  const uint64_t max_bins_;
  mutable absl::Mutex mu_;
  std::map<std::string, std::shared_ptr<HistogramEntry>, std::less<>> entries_ ABSL_GUARDED_BY(mu_);
};

}  // namespace histd::server
