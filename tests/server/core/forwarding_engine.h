// A test Engine that forwards every call to a CPU engine it owns. Pipeline tests derive
// from it and override only the calls they observe or delay (usually Apply), so that the
// Engine interface is spelled out once.
//
// Thread safety: as the CPU engine's.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/cpu/cpu_engine.h"
#include "engine/engine.h"

namespace histd::server::testing {

class ForwardingEngine : public Engine {
 public:
  explicit ForwardingEngine(int cpu_threads) : inner_(std::move(*MakeCpuEngine(cpu_threads))) {}

  std::string name() const override { return inner_->name(); }
  std::string device() const override { return inner_->device(); }
  absl::StatusOr<std::unique_ptr<HistogramStorage>> CreateHistogram(
      const HistogramShape& shape) override {
    return inner_->CreateHistogram(shape);
  }
  absl::Status Reset(HistogramStorage& h) override { return inner_->Reset(h); }
  absl::Status ReadAndReset(HistogramStorage& h, void* out) override {
    return inner_->ReadAndReset(h, out);
  }
  absl::Status Merge(const HistogramStorage& s, HistogramStorage& t) override {
    return inner_->Merge(s, t);
  }
  absl::Status MergeFromHost(const uint8_t* bins, HistogramStorage& t) override {
    return inner_->MergeFromHost(bins, t);
  }
  absl::StatusOr<HistogramSummary> Summarize(const HistogramStorage& h) override {
    return inner_->Summarize(h);
  }
  absl::Status ReadBins(const HistogramStorage& h, const ReadSpec& spec, void* out) override {
    return inner_->ReadBins(h, spec, out);
  }
  absl::StatusOr<std::unique_ptr<StagingBuffer>> CreateStagingBuffer(size_t bytes) override {
    return inner_->CreateStagingBuffer(bytes);
  }
  absl::StatusOr<std::unique_ptr<HostRegion>> RegisterHostRegion(const uint8_t* data,
                                                                size_t bytes) override {
    return inner_->RegisterHostRegion(data, bytes);
  }
  void Apply(const StagingBuffer& staging, std::vector<IngestItem> items, ApplyDone done) override {
    inner_->Apply(staging, std::move(items), std::move(done));
  }
  absl::StatusOr<HostArray> Reduce(const ArrayRef& a, ReduceOp op, Dim d) override {
    return inner_->Reduce(a, op, d);
  }
  absl::StatusOr<HostArray> Scan(const ArrayRef& a, bool inclusive, Dim d) override {
    return inner_->Scan(a, inclusive, d);
  }
  absl::StatusOr<HostArray> Transpose(const ArrayRef& a) override { return inner_->Transpose(a); }
  absl::StatusOr<HostArray> Matmul(const MatmulArgs& args) override { return inner_->Matmul(args); }

 protected:
  Engine& inner() { return *inner_; }

 private:
  std::unique_ptr<Engine> inner_;
};

}  // namespace histd::server::testing
