// Exact, saturating, multi-threaded binning of staged samples: the CPU engine's Apply.
//
// Each histogram of a batch is split into parts owning contiguous bin ranges, one task
// each (as many as the pool has threads, when its samples and bins are many enough); a
// task scans all of that histogram's samples and applies those in its range with plain,
// branch-free saturating increments (v + (v < cap)). Every bin has exactly one writer, so
// it ends at exactly min(cap, hits) for any skew or order, and never wraps; no atomics.
// The previous version CAS-ed every sample (a locked instruction each); this one is
// 1.3-1.5x as fast and, on two threads, as fast as a plain single-threaded ++bins[i] loop
// (bench/results/cpu_ingest.md: the cache misses of scattered bins are what remains).
// Coordinates are binned with AxisBin (model/histogram_types.h), the
// definition the CUDA engine shares: x over columns, y over rows; a sample outside either
// axis counts as that axis' underflow/overflow (both, when both are out) and is not binned.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "engine/cpu/cpu_histogram.h"
#include "engine/cpu/thread_pool.h"
#include "engine/engine.h"

namespace histd {

// CheckIngestItems (engine/engine.h), plus: each item names a CPU histogram. Fills
// histograms[i] for items[i]. INVALID_ARGUMENT names the item.
absl::Status CheckCpuIngestItems(const StagingBuffer& staging,
                                 const std::vector<IngestItem>& items,
                                 std::vector<const CpuHistogram*>* histograms);

// Folds the checked items into their histograms, spread over the pool, reading each from
// the staging buffer or, for an item with a region, from that region in place. Region
// items are validated first (Engine::Apply): one with a bin index >= bins is not applied
// and reported in its result (invalid, first_invalid, first_invalid_value); their NaN
// coordinates are counted (x_nan, y_nan). The caller holds every histogram's lock
// exclusively (HistogramLocks::Mode::kExclusive). Returns one result per item. A bin index
// >= bins met while applying (its region changed after validation) is skipped and counted
// in its item's result and in *out_of_range.
std::vector<IngestItemResult> CpuIngest(const uint8_t* staging,
                                        const std::vector<IngestItem>& items,
                                        const std::vector<const CpuHistogram*>& histograms,
                                        ThreadPool& pool, uint64_t* out_of_range);

}  // namespace histd
