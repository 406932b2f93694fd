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
#include "kernels/engine.h"
#include "kernels/histogram_types.h"
#include "server/memory_budget.h"

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

class HistogramEntry {
 public:
  // `charge`: the storage's bytes held against a memory budget for as long as the entry lives.
  HistogramEntry(HistogramSpec spec, std::unique_ptr<HistogramStorage> storage,
                 MemoryCharge charge = MemoryCharge());

  const HistogramSpec& spec() const { return spec_; }
  const std::string& name() const { return spec_.name; }
  // The engine's operations are thread-safe; the entry only owns the storage.
  HistogramStorage& storage() const { return *storage_; }

  IngestCounters counters() const;
  // One applied message of `samples` samples (or one part of it: messages == 0).
  void RecordApplied(uint64_t messages, uint64_t samples, const IngestItemResult& result);
  void RecordRejected(uint64_t samples);
  void ResetCounters();
  // Replaces the counters (restoring a snapshot).
  void RestoreCounters(const IngestCounters& counters);

 private:
  const HistogramSpec spec_;
  const std::unique_ptr<HistogramStorage> storage_;
  const MemoryCharge charge_;
  mutable absl::Mutex mu_;
  IngestCounters counters_ ABSL_GUARDED_BY(mu_);
};

class HistogramStore {
 public:
  // Histograms' bins are charged to `budget` (host or device memory, where the engine keeps
  // them) before they are allocated: beyond it Create is RESOURCE_EXHAUSTED. Null: no budget.
  HistogramStore(Engine& engine, uint32_t max_histograms, uint64_t max_bins_per_histogram,
                 MemoryBudget* budget = nullptr);

  // Bytes charged for a histogram of `shape`: its bins in whole 16-byte chunks, as engines
  // allocate them.
  static uint64_t ChargedBytes(const HistogramShape& shape);

  absl::StatusOr<std::shared_ptr<HistogramEntry>> Create(const HistogramSpec& spec);
  absl::Status Delete(absl::string_view name);
  absl::StatusOr<std::shared_ptr<HistogramEntry>> Find(absl::string_view name) const;
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
