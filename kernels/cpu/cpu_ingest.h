// Exact, saturating, multi-threaded binning of staged samples: the CPU engine's Apply.
//
// Every sample increments its bin with a compare-and-swap on that byte (load; if the bin
// already holds cap, skip; else CAS v -> v + 1, retrying on contention). A bin therefore
// ends at exactly min(cap, hits) for any skew, order and number of concurrent appliers, and
// never wraps. Coordinates are binned with AxisBin (kernels/histogram_types.h), the
// definition the CUDA engine shares: x over columns, y over rows; a sample outside either
// axis counts as that axis' underflow/overflow (both, when both are out) and is not binned.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "kernels/cpu/cpu_histogram.h"
#include "kernels/cpu/thread_pool.h"
#include "kernels/engine.h"

namespace histd {

// CheckIngestItems (kernels/engine.h), plus: each item names a CPU histogram. Fills
// histograms[i] for items[i]. INVALID_ARGUMENT names the item.
absl::Status CheckCpuIngestItems(const StagingBuffer& staging,
                                 const std::vector<IngestItem>& items,
                                 std::vector<const CpuHistogram*>* histograms);

// Folds the checked items into their histograms, spread over the pool. The caller holds
// every histogram's lock at least shared. Returns one result per item. A bin index >= bins
// (the caller's validation failed) is skipped and counted in *out_of_range.
std::vector<IngestItemResult> CpuIngest(const uint8_t* staging,
                                        const std::vector<IngestItem>& items,
                                        const std::vector<const CpuHistogram*>& histograms,
                                        ThreadPool& pool, uint64_t* out_of_range);

}  // namespace histd
