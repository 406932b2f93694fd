#include "engine/cuda/cuda_engine.h"

#include <cuda_runtime_api.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "kernels/common/cuda_status.h"
#include "kernels/common/device_buffer.h"
#include "engine/cuda/cuda_compute.h"
#include "engine/cuda/cuda_histogram.h"
#include "engine/cuda/cuda_batch_queue.h"
#include "engine/cuda/histogram_ops.h"

namespace histd {
namespace {

using cuda::CudaHistogram;
using cuda::DeviceBins;
using cuda::DeviceBuffer;
using cuda::PinnedBuffer;

// Each host thread gets its own stream, so concurrent queries do not serialize.
cudaStream_t Stream() { return cudaStreamPerThread; }

// Device memory the stream-ordered pool keeps for reads' scratch between reads.
constexpr uint64_t kReadScratchPoolBytes = uint64_t{64} << 20;

class PinnedStagingBuffer final : public StagingBuffer {
 public:
  explicit PinnedStagingBuffer(PinnedBuffer buffer)
      : StagingBuffer(buffer.as<uint8_t>(), buffer.bytes()), buffer_(std::move(buffer)) {}

 private:
  PinnedBuffer buffer_;
};

// A producer's region, page-locked (read-only) for the device to copy from directly.
class PinnedHostRegion final : public HostRegion {
 public:
  PinnedHostRegion(const uint8_t* data, size_t bytes) : HostRegion(data, bytes) {}
  ~PinnedHostRegion() override { cudaHostUnregister(const_cast<uint8_t*>(data())); }
};

// Thread safety: every method may be called from any thread. Work that is not ingest runs on
// the calling thread's per-thread default stream and synchronizes it before returning, so
// that later calls from any thread see its effects; Reset and Merge are ordered against
// ingest on the device (CudaBatchQueue::OrderExclusive): after every batch submitted
// before them, before the kernel of every batch submitted after.
class CudaEngine final : public Engine {
 public:
  CudaEngine(int device, std::string name, uint64_t memory_bytes,
             std::unique_ptr<cuda::CudaBatchQueue> pipeline)
      : device_(device),
        name_(std::move(name)),
        memory_bytes_(memory_bytes),
        pipeline_(std::move(pipeline)) {}

  std::string name() const override { return name_; }
  std::string device() const override { return absl::StrCat("cuda:", device_); }
  std::vector<uint64_t> device_memory_bytes() const override { return {memory_bytes_}; }
  void SetDeviceMemoryBudgets(std::vector<DeviceMemoryBudget*> budgets) override {
    device_budget_ = budgets.empty() ? nullptr : budgets.front();
  }
  EngineStats stats() const override { return pipeline_->stats(); }

  absl::StatusOr<std::unique_ptr<HistogramStorage>> CreateHistogram(
      const HistogramShape& shape) override {
    HISTD_RETURN_IF_ERROR(CheckHistogramShape(shape));
    HISTD_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
    // Whole 16-byte chunks, padding zeroed (the padding contract, cuda_histogram.h).
    const uint64_t bytes = shape.storage_bytes();
    absl::StatusOr<DeviceMemoryHold> hold = DeviceMemoryHold::Take(
        device_budget_, bytes,
        absl::StrCat("a histogram of ", shape.rows, " x ", shape.cols, " bins"));
    if (!hold.ok()) return hold.status();
    auto bins = DeviceBuffer::Allocate(bytes);
    if (!bins.ok()) return bins.status();
    HISTD_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(bins->get(), 0, bytes, Stream()));
    HISTD_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(Stream()));
    return std::unique_ptr<HistogramStorage>(
        new CudaHistogram(shape, std::move(*bins), device_, *std::move(hold)));
  }

  absl::Status Reset(HistogramStorage& histogram) override {
    HISTD_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
    HISTD_RETURN_IF_ERROR(pipeline_->OrderExclusive(Stream(), [&]() -> absl::Status {
      // The whole allocation, padding included (zero already: cuda_histogram.h).
      HISTD_CUDA_RETURN_IF_ERROR(
          cudaMemsetAsync(DeviceBins(histogram), 0, histogram.bytes_used(), Stream()));
      return absl::OkStatus();
    }));
    return cuda::ToStatus(cudaStreamSynchronize(Stream()), "reset");
  }

  // The copy and the memset are one piece of exclusive work on one stream: no batch's
  // kernel runs between them (CudaBatchQueue::OrderExclusive).
  absl::Status ReadAndReset(HistogramStorage& histogram, void* out) override {
    if (out == nullptr) return absl::InvalidArgumentError("read and reset: no output buffer");
    HISTD_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
    HISTD_RETURN_IF_ERROR(pipeline_->OrderExclusive(Stream(), [&]() -> absl::Status {
      HISTD_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(out, DeviceBins(histogram),
                                                 histogram.shape().bins(),
                                                 cudaMemcpyDeviceToHost, Stream()));
      // The whole allocation, padding included (zero already: cuda_histogram.h).
      HISTD_CUDA_RETURN_IF_ERROR(
          cudaMemsetAsync(DeviceBins(histogram), 0, histogram.bytes_used(), Stream()));
      return absl::OkStatus();
    }));
    return cuda::ToStatus(cudaStreamSynchronize(Stream()), "read and reset");
  }

  absl::Status Merge(const HistogramStorage& source, HistogramStorage& target) override {
    const HistogramShape& t = target.shape();
    HISTD_RETURN_IF_ERROR(CheckMerge(source.shape(), t));
    HISTD_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
    HISTD_RETURN_IF_ERROR(pipeline_->OrderExclusive(Stream(), [&] {
      return cuda::LaunchMergeSaturating(DeviceBins(source), DeviceBins(target), t.bins(), t.cap, Stream());
    }));
    return cuda::ToStatus(cudaStreamSynchronize(Stream()), "merge");
  }

  absl::Status MergeFromHost(const uint8_t* bins, HistogramStorage& target) override {
    const HistogramShape& t = target.shape();
    HISTD_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
    auto source = DeviceBuffer::Allocate(t.bins());
    if (!source.ok()) return source.status();
    HISTD_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(source->get(), bins, t.bins(), cudaMemcpyHostToDevice, Stream()));
    HISTD_RETURN_IF_ERROR(pipeline_->OrderExclusive(Stream(), [&] {
      return cuda::LaunchMergeSaturating(source->as<uint8_t>(), DeviceBins(target), t.bins(), t.cap, Stream());
    }));
    return cuda::ToStatus(cudaStreamSynchronize(Stream()), "merge from host");
  }

  absl::StatusOr<HistogramSummary> Summarize(const HistogramStorage& histogram) override {
    HISTD_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
    auto counters = DeviceBuffer::Allocate(2 * sizeof(unsigned long long));
    if (!counters.ok()) return counters.status();
    HISTD_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(counters->get(), 0, counters->bytes(), Stream()));
    HISTD_RETURN_IF_ERROR(cuda::LaunchSummarize(DeviceBins(histogram), histogram.shape().bins(),
                                                histogram.shape().cap,
                                                counters->as<unsigned long long>(), Stream()));
    unsigned long long host[2] = {0, 0};
    HISTD_CUDA_RETURN_IF_ERROR(
        cudaMemcpyAsync(host, counters->get(), sizeof host, cudaMemcpyDeviceToHost, Stream()));
    HISTD_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(Stream()));
    return HistogramSummary{host[0], host[1]};
  }

  absl::Status ReadBins(const HistogramStorage& histogram, const ReadSpec& spec,
                        void* out) override {
    HISTD_RETURN_IF_ERROR(CheckReadSpec(histogram.shape(), spec));
    if (spec.region.rows() == 0 || spec.region.cols() == 0) return absl::OkStatus();  // empty
    HISTD_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
    const uint32_t cols = histogram.shape().cols;
    const uint8_t* bins = DeviceBins(histogram);
    const Region& r = spec.region;
    if (ReadBinsAsStored(spec) && !spec.transpose) {
      // The bins as stored: one pitched copy straight from the histogram.
      HISTD_CUDA_RETURN_IF_ERROR(cudaMemcpy2DAsync(
          out, r.cols(), bins + uint64_t{r.row_begin} * cols + r.col_begin, cols, r.cols(),
          r.rows(), cudaMemcpyDeviceToHost, Stream()));
      return cuda::ToStatus(cudaStreamSynchronize(Stream()), "read bins");
    }
    // Scratch from the stream-ordered pool (the device's default pool, which keeps
    // kReadScratchPoolBytes between reads): cudaMalloc and cudaFree would synchronize the
    // whole device, so a read would wait for every ingest batch in flight.
    const uint64_t bytes = ReadBinsBytes(spec);
    absl::StatusOr<DeviceMemoryHold> hold = DeviceMemoryHold::Take(
        device_budget_, bytes,
        absl::StrCat("the scratch of a ", ReadBinsRows(spec), " x ", ReadBinsCols(spec),
                     " device read"));
    if (!hold.ok()) return hold.status();
    void* scratch = nullptr;
    HISTD_CUDA_RETURN_IF_ERROR(cudaMallocAsync(&scratch, bytes, Stream()));
    absl::Status status = cuda::LaunchReadRegion(bins, cols, spec, scratch, Stream());
    if (status.ok()) {
      status = cuda::ToStatus(
          cudaMemcpyAsync(out, scratch, bytes, cudaMemcpyDeviceToHost, Stream()), "read bins");
    }
    const cudaError_t freed = cudaFreeAsync(scratch, Stream());
    if (status.ok()) status = cuda::ToStatus(freed, "cudaFreeAsync");
    const cudaError_t synced = cudaStreamSynchronize(Stream());
    if (status.ok()) status = cuda::ToStatus(synced, "read bins");
    return status;
  }

  absl::StatusOr<std::unique_ptr<StagingBuffer>> CreateStagingBuffer(size_t bytes) override {
    HISTD_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
    auto pinned = PinnedBuffer::Allocate(bytes);
    if (!pinned.ok()) return pinned.status();
    return std::unique_ptr<StagingBuffer>(new PinnedStagingBuffer(std::move(*pinned)));
  }

  // Pinned once (portable: every device's engine may copy from it), read-only as mapped.
  // Where the device cannot register read-only memory, nullptr: the caller stages the
  // region's samples instead.
  absl::StatusOr<std::unique_ptr<HostRegion>> RegisterHostRegion(const uint8_t* data,
                                                                size_t bytes) override {
    HISTD_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
    const cudaError_t e = cudaHostRegister(const_cast<uint8_t*>(data), bytes,
                                           cudaHostRegisterPortable | cudaHostRegisterReadOnly);
    if (e != cudaSuccess) {
      cudaGetLastError();  // not sticky: clear it, the engine goes on
      return std::unique_ptr<HostRegion>();
    }
    return std::unique_ptr<HostRegion>(new PinnedHostRegion(data, bytes));
  }

  void Apply(const StagingBuffer& staging, std::vector<IngestItem> items,
             ApplyDone done) override {
    pipeline_->Submit(staging, std::move(items), std::move(done));
  }

  absl::StatusOr<HostArray> Reduce(const ArrayRef& input, ReduceOp op, Dim collapse) override {
    HISTD_RETURN_IF_ERROR(CheckReduce(input, op, collapse));
    HISTD_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
    return cuda::RunReduce(input, op, collapse, Stream(), device_budget_);
  }

  absl::StatusOr<HostArray> Scan(const ArrayRef& input, bool inclusive, Dim along) override {
    HISTD_RETURN_IF_ERROR(CheckArray(input));
    HISTD_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
    return cuda::RunScan(input, inclusive, along, Stream(), device_budget_);
  }

  absl::StatusOr<HostArray> Transpose(const ArrayRef& input) override {
    HISTD_RETURN_IF_ERROR(CheckArray(input));
    HISTD_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
    return cuda::RunTranspose(input, Stream(), device_budget_);
  }

  absl::StatusOr<HostArray> Matmul(const MatmulArgs& args) override {
    HISTD_RETURN_IF_ERROR(CheckMatmul(args));
    HISTD_CUDA_RETURN_IF_ERROR(cudaSetDevice(device_));
    return cuda::RunMatmul(args, Stream(), device_budget_);
  }

 private:

  const int device_;
  const std::string name_;
  const uint64_t memory_bytes_;  // the device's global memory
  // Histograms, compute calls and reads reserve their device memory here first (null: not
  // reserved). Summarize's 16 bytes of counters and a snapshot
  // restore's one-histogram copy (MergeFromHost) are not reserved: the first is below any
  // budget's margin, and the second would refuse a snapshot the budget's histograms fill.
  DeviceMemoryBudget* device_budget_ = nullptr;
  std::unique_ptr<cuda::CudaBatchQueue> pipeline_;
};

}  // namespace

int CudaDeviceCount() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

absl::StatusOr<std::unique_ptr<Engine>> MakeCudaEngine(int device) {
  const int count = CudaDeviceCount();
  if (device < 0 || device >= count) {
    return absl::UnavailableError(
        absl::StrCat("cuda engine: device ", device, " requested, ", count, " visible"));
  }
  HISTD_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  // Reads' scratch (ReadBins) comes from the device's default stream-ordered pool; keep what
  // a few pooled views need mapped between reads instead of returning it at each sync.
  cudaMemPool_t pool = nullptr;
  HISTD_CUDA_RETURN_IF_ERROR(cudaDeviceGetDefaultMemPool(&pool, device));
  uint64_t keep = kReadScratchPoolBytes;
  HISTD_CUDA_RETURN_IF_ERROR(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  cudaDeviceProp prop{};
  HISTD_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, device));
  auto pipeline = cuda::CudaBatchQueue::Create(device);
  if (!pipeline.ok()) return pipeline.status();
  return std::unique_ptr<Engine>(new CudaEngine(
      device, absl::StrCat("cuda:", device, " ", prop.name, " (", prop.multiProcessorCount, " SMs)"),
      prop.totalGlobalMem, std::move(*pipeline)));
}

}  // namespace histd
