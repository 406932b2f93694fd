// The production 2D capped histogram kernel: one launch folds a work list of sample
// batches, for any number of resident one-byte histograms, into those histograms.
//
// Contract (docs/model.md): every bin ends at min(cap, start + hits) exactly, where start is
// the byte it held before the launch (a start already >= cap is left as it is); it never
// wraps and never spills into a neighbour, whatever the order, concurrency or skew of the
// samples, and whatever other work items of the same launch target the same histogram.
// How that is proved: kernels/histogram/exact_bin_ops.cuh.
//
// Lifecycle (every device op's; docs/development.md, "Style" 4):
//   HISTD_RETURN_IF_ERROR(HistogramAccumulate::can_implement(args));
//   DeviceBuffer ws = DeviceBuffer::Allocate(HistogramAccumulate::get_workspace_size(args));
//   HISTD_RETURN_IF_ERROR(HistogramAccumulate::run(args, ws.get(), stream));
// run() is asynchronous on `stream`; the work list, samples, outflow and workspace must stay
// alive and untouched until the stream reaches that point. Two launches that update the
// same histograms must not run at the same time (order them on one stream or with
// events): with deferred misses or the bucketed strategy a launch
// rewrites whole 16-byte chunks of the histograms. Within one launch, any number of work
// items may target the same histogram: items with the same `bins` pointer are the same
// histogram (same shape and cap), and distinct histograms share at most the words at
// their ends. The bucketed strategy (kAuto's choice for small launches) is a cooperative
// launch whose blocks wait for each other at a grid barrier: keep at most one histogram
// launch in flight per device (histd's ingest pipeline chains them with events).
// Memory: the kernels read and write only words and 16-byte chunks that hold at least one
// bin of an item's histogram, so every chunk that holds a bin must be allocated (the
// engine pads each histogram to whole chunks: engine/cuda/cuda_histogram.h); a
// byte of such a chunk outside the histogram (padding, or a neighbour's bin) keeps its
// value (word CAS rewrites it as read; chunks are stored whole only inside the histogram).
//
// Thread safety: stateless; any thread may call.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "absl/status/status.h"

namespace histd::cuda {

// One batch of samples for one histogram.
struct HistogramWork {
  uint8_t* bins;             // device: rows * cols one-byte bins, row-major; any alignment,
                             // but every 16-byte chunk holding a bin must be allocated
                             // (the padding contract: engine/cuda/cuda_histogram.h)
  uint32_t rows, cols;       // 1 <= rows * cols <= histd::kMaxHistogramBins (2^31)
  uint8_t cap;               // 1..255
  uint32_t kind;             // 0 = uint32 flattened bin index (< rows*cols), 1 = float32 (x, y)
  uint64_t sample_offset;    // in 4-byte words into the samples buffer
  uint64_t count;            // samples (pairs for kind 1)
  float x_lo, x_hi, y_lo, y_hi;  // kind 1: x bins over cols, y over rows (AxisBin)
};

// Per work item, in device memory; run() ADDS to it. Bin indices count binned = count.
// Coordinates: each axis is counted on its own; a pair is binned when both are in range.
struct HistogramOutflow {
  unsigned long long binned, x_underflow, x_overflow, y_underflow, y_overflow;
};

enum class HistogramStrategy : uint8_t {
  kAuto,        // the production choice (kernels/histogram/tuning.h): kBucketed for launches of at
                // most kAutoBucketedMaxSamples samples and kBucketMaxItems items; kGlobalOnly
                // for other launches of at most kAutoGlobalOnlyMaxSamples; else kHotWindow
  kHotWindow,   // hot window of 16-bit on-chip counters per block (kHotWindowConfig) + exact
                // global misses, deferred to range-sorted records folded by a second kernel
  kGlobalOnly,  // no window: every sample is an exact global byte update (the 'blocking CAS' idea)
  kBucketed,    // one cooperative launch: tiles counting-sorted by 16K-bin slice (interleaved
                // 64-bin granules of aligned histograms) into
                // records, a grid barrier, then each (histogram, slice) counted on chip and
                // merged once (agent_bucketed.cuh). At most kBucketMaxItems (1024) items;
                // items with the same `bins` pointer are one histogram (same shape and cap).
};

// Knobs of the production kernels for tests and benchmarks; defaults are the production
// choice. Other configurations, strategies and benchmark probes: histd::experiments
// (experiments/histogram/histogram_variants.h).
struct HistogramAccumulateOptions {
  HistogramStrategy strategy = HistogramStrategy::kAuto;
  uint32_t tile_samples = 0;     // samples per block tile; 0 = chosen per launch
                                 // (ChooseTileSamples, kernels/histogram/tuning.h)
  uint32_t max_window_bins = 0;  // clamp the hot window (tests force misses); 0 = capacity
  int miss_guess = -1;           // misses: 0 load + CAS, 1 CAS guessing 0 first; -1 = default
  uint32_t defer_bins_per_miss = 0;  // a tile defers its misses when its item is predicted
                                     // to miss at least once per this many bins;
                                     // 0 = kDeferMinMissesPerBinInverse (deferred_layout.h)
  bool work_by_value = true;     // kBucketed: take HistogramAccumulateArgs::host_work as a
                                 // kernel parameter when given and small enough; false: read the
                                 // device work list (tests and benchmarks compare the two)
  bool interleave_slices = true; // kBucketed: deal a 16-byte-aligned histogram's bins to its
                                 // slices in rotated 64-bin granules (BucketSliceMap); false:
                                 // contiguous 16K-bin slices (tests and benchmarks compare)
  uint32_t bucket_slice_bins = 0;  // kBucketed: 0 = chosen per launch (ChooseBucketSliceShift);
                                   // 16384, or 8192 wherever it applies (launches of <= 32
                                   // items on histograms of <= 2M bins): tests and benchmarks
};

struct HistogramAccumulateArgs {
  const HistogramWork* work = nullptr;       // device, work_count entries
  int work_count = 0;
  // Optional: the same work_count entries in host memory, read by run() only (it may be
  // reused once run() returns). A bucketed launch of at most kBucketInlineItems items
  // (bucketed_layout.h) then passes them by value, which spares its blocks the memory
  // round trip to the work list before anything else can start, and `work` is not read
  // (TakesWorkByValue: the caller need not copy the list to the device). Otherwise it must
  // equal `work`.
  const HistogramWork* host_work = nullptr;
  const uint32_t* samples = nullptr;         // device
  HistogramOutflow* outflow = nullptr;       // device, work_count entries, added to
  uint64_t total_samples = 0;                // sum of count over the work list (an upper
                                             // bound is fine); sizes the grid
  HistogramAccumulateOptions options;
};

class HistogramAccumulate {
 public:
  // INVALID_ARGUMENT naming the problem when the launch cannot be made. The work items
  // themselves are on the device and are trusted (validated by the host that built them);
  // when host_work is given, its shapes are checked here.
  static absl::Status can_implement(const HistogramAccumulateArgs& args);
  // Bytes of device scratch run() needs (0 when work_count == 0).
  static size_t get_workspace_size(const HistogramAccumulateArgs& args);
  // Enqueues the work on `stream`. Every launch is checked; errors carry the CUDA name.
  static absl::Status run(const HistogramAccumulateArgs& args, void* workspace, cudaStream_t stream);
  // Whether run() takes the bucketed strategy: kBucketed, or kAuto for small launches
  // (kernels/histogram/tuning.h). Benchmarks ask it to read the right timeline.
  static bool UsesBucketed(const HistogramAccumulateArgs& args);
  // Whether run() takes the work list from host_work as a kernel parameter and never reads
  // `work` (whose contents may then be left stale).
  static bool TakesWorkByValue(const HistogramAccumulateArgs& args);
};

}  // namespace histd::cuda
