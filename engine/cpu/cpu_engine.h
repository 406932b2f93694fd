// The multi-threaded CPU engine: histd::Engine on host memory, with the exact semantics of
// engine/engine.h. What CI tests, and what runs on a machine without a GPU.
//
// Work is spread over one ThreadPool (all hardware threads by default); loops keep small
// inputs on the calling thread. Apply runs synchronously: it folds the samples on the
// calling thread and the pool, then calls `done` on the calling thread before returning.
//
// Thread safety: every method may be called from any thread concurrently. Each histogram
// has its own mutex (engine/cpu/cpu_histogram.h): Apply holds it shared and updates bins
// with atomics, so appliers run together; reads, Merge, Reset and ReadAndReset hold it
// exclusive. A read therefore sees every Apply whose `done` ran before it, and none half done.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "engine/cpu/thread_pool.h"
#include "engine/engine.h"

namespace histd {

// threads: worker parallelism, >= 1; 0 means one per CPU this process may run on
// (AvailableCpus, engine/host_cpus.h). INVALID_ARGUMENT if < 0.
absl::StatusOr<std::unique_ptr<Engine>> MakeCpuEngine(int threads);

class CpuEngine final : public Engine {
 public:
  explicit CpuEngine(int threads);

  std::string name() const override;
  std::string device() const override { return "cpu"; }
  EngineStats stats() const override;

  absl::StatusOr<std::unique_ptr<HistogramStorage>> CreateHistogram(
      const HistogramShape& shape) override;
  absl::Status Reset(HistogramStorage& histogram) override;
  absl::Status ReadAndReset(HistogramStorage& histogram, void* out) override;
  absl::Status Merge(const HistogramStorage& source, HistogramStorage& target) override;
  absl::Status MergeFromHost(const uint8_t* bins, HistogramStorage& target) override;
  absl::StatusOr<HistogramSummary> Summarize(const HistogramStorage& histogram) override;
  absl::Status ReadBins(const HistogramStorage& histogram, const ReadSpec& spec,
                        void* out) override;

  absl::StatusOr<std::unique_ptr<StagingBuffer>> CreateStagingBuffer(size_t bytes) override;
  // The region as is: Apply's threads read it in place.
  absl::StatusOr<std::unique_ptr<HostRegion>> RegisterHostRegion(const uint8_t* data,
                                                                size_t bytes) override;
  void Apply(const StagingBuffer& staging, std::vector<IngestItem> items,
             ApplyDone done) override;

  absl::StatusOr<HostArray> Reduce(const ArrayRef& input, ReduceOp op, Dim collapse) override;
  absl::StatusOr<HostArray> Scan(const ArrayRef& input, bool inclusive, Dim along) override;
  absl::StatusOr<HostArray> Transpose(const ArrayRef& input) override;
  absl::StatusOr<HostArray> Matmul(const MatmulArgs& args) override;

 private:
  ThreadPool pool_;
  mutable absl::Mutex stats_mu_;
  EngineStats stats_ ABSL_GUARDED_BY(stats_mu_);  // copy_seconds stays 0: no device copies
};

}  // namespace histd
