// The CPU engine's histogram: one byte per bin in host memory, plus the lock that orders
// the operations on it.
//
// Thread safety: mu() orders everything done to the bins.
//   - Apply holds it exclusive and splits the bins among its tasks, one writer per bin
//     (cpu_ingest.h); concurrent Apply calls on one histogram take turns.
//   - Reads (ReadBins, Summarize, compute on a histogram), Merge and Reset hold it exclusive
//     (Lock): they see no Apply half done and may use plain loads and stores.
// Several histograms are always locked in address order (HistogramLocks), so operations
// that lock more than one (Apply with many items, Merge) cannot deadlock.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "engine/engine.h"

namespace histd {

class CpuHistogram final : public HistogramStorage {
 public:
  // Zeroed bins; RESOURCE_EXHAUSTED when the allocation fails. The shape must be checked.
  static absl::StatusOr<std::unique_ptr<CpuHistogram>> Create(const HistogramShape& shape);

  uint64_t bytes_used() const override { return shape().bins(); }

  absl::Mutex& mu() const ABSL_LOCK_RETURNED(mu_) { return mu_; }
  // Plain access for Apply's worker threads, while the thread that called Apply holds the
  // exclusive lock (the analysis cannot see a lock held by another thread); each worker
  // writes only the bin range it owns.
  uint8_t* bins_for_partitioned_update() const { return bins_.get(); }
  // Plain access, under the exclusive lock.
  uint8_t* bins() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return bins_.get(); }

  // The CPU histogram behind `storage`, or null when another engine created it.
  static const CpuHistogram* From(const HistogramStorage* storage) {
    return dynamic_cast<const CpuHistogram*>(storage);
  }

 private:
  CpuHistogram(const HistogramShape& shape, std::unique_ptr<uint8_t[]> bins)
      : HistogramStorage(shape), bins_(std::move(bins)) {}

  mutable absl::Mutex mu_;
  const std::unique_ptr<uint8_t[]> bins_;  // shape().bins() bytes; the bytes follow mu_
};

// Locks a set of histograms (duplicates allowed) in address order; unlocks on destruction.
class HistogramLocks {
 public:
  enum class Mode { kShared, kExclusive };
  HistogramLocks(std::vector<const CpuHistogram*> histograms, Mode mode);
  ~HistogramLocks();
  HistogramLocks(const HistogramLocks&) = delete;
  HistogramLocks& operator=(const HistogramLocks&) = delete;

 private:
  std::vector<const CpuHistogram*> locked_;  // distinct, ascending addresses
  Mode mode_;
};

}  // namespace histd
