// The compute engine interface: everything the server asks of a device.
//
// Two implementations with identical integer results: the multi-threaded CPU engine
// (engine/cpu/) and the CUDA engine (kernels/). The server knows only this file.
//
// Thread safety: every method may be called from any thread, concurrently. Operations on
// one histogram are ordered: a read (ReadBins, Summarize, Reduce/Scan/Transpose/Matmul on a
// histogram) reflects every Apply whose `done` ran before the read was called, and every
// Reset/Merge that returned before it. Storage must outlive every operation that uses it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "engine/device_memory_budget.h"
#include "engine/read_blocks.h"
#include "model/array.h"
#include "model/histogram_types.h"

namespace histd {

// The bins of one histogram, owned by the engine that created it (host or device memory).
class HistogramStorage {
 public:
  virtual ~HistogramStorage() = default;
  const HistogramShape& shape() const { return shape_; }
  // Bytes held for the bins.
  virtual uint64_t bytes_used() const = 0;

 protected:
  explicit HistogramStorage(HistogramShape shape) : shape_(shape) {}

 private:
  HistogramShape shape_;
};

// Host memory the engine reads samples from fast: page-locked for the CUDA engine.
class StagingBuffer {
 public:
  virtual ~StagingBuffer() = default;
  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t capacity() const { return capacity_; }

 protected:
  StagingBuffer(uint8_t* data, size_t capacity) : data_(data), capacity_(capacity) {}

 private:
  uint8_t* data_;
  size_t capacity_;
};

// Host memory the engine did not allocate and reads samples from in place: a producer's
// shared-memory region, mapped read-only (docs/shm-ingest.md). Made by
// Engine::RegisterHostRegion; the memory must stay mapped while the object lives.
class HostRegion {
 public:
  virtual ~HostRegion() = default;
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 protected:
  HostRegion(const uint8_t* data, size_t size) : data_(data), size_(size) {}

 private:
  const uint8_t* data_;
  size_t size_;
};

// One message's samples in a batch: inside the staging buffer, or in a registered region.
struct IngestItem {
  HistogramStorage* histogram = nullptr;
  SampleKind kind = SampleKind::kBinIndex;
  // Into the staging buffer; a multiple of 4 (8 for kCoordXY). An item read from a region
  // still has its bytes reserved here (unwritten): a batch's items fit the staging buffer.
  size_t byte_offset = 0;
  size_t count = 0;        // samples
  AxisRange x, y;          // kCoordXY only
  // Not null: the samples are at region->data() + region_offset (aligned as byte_offset),
  // not in the staging buffer, and not validated yet (Apply validates them).
  const HostRegion* region = nullptr;
  size_t region_offset = 0;
};

// Half-open rows [row_begin, row_end) x cols [col_begin, col_end), inside the histogram.
struct Region {
  uint32_t row_begin = 0, row_end = 0, col_begin = 0, col_end = 0;
  uint32_t rows() const { return row_end - row_begin; }
  uint32_t cols() const { return col_end - col_begin; }
};

// How a read combines the bins of one output block: their sum, or their largest bin.
enum class PoolOp : uint8_t { kSum, kMax };

// What ReadBins writes: the region cut into blocks along each dimension, one output element
// per block, row-major, rows and columns swapped if transposed. Along the rows (the columns
// likewise) the region's R rows are cut (engine/read_blocks.h)
//   - by factor when out_rows == 0: ceil(R / row_factor) blocks of row_factor rows, the
//     last one partial (the Query RPC's rebinning);
//   - into exactly out_rows blocks when 1 <= out_rows <= R (row_factor must stay 1): block
//     i holds rows [floor(i R / out_rows), floor((i + 1) R / out_rows)) of the region, so
//     any size of view is possible, e.g. 8192 columns to 1000 pixels (a pooled view).
// Elements are kU8 when pool is kMax (a block's largest bin) or when every block is one bin
// by factor (both factors 1, no out size: the bins as stored); else kU32 sums of each block.
struct ReadSpec {
  Region region;
  uint32_t row_factor = 1;
  uint32_t col_factor = 1;
  uint32_t out_rows = 0;  // 0: by row_factor
  uint32_t out_cols = 0;  // 0: by col_factor
  PoolOp pool = PoolOp::kSum;
  bool transpose = false;
};

struct MatmulArgs {
  ArrayRef a;          // m x k; kF32, or a histogram (read as float)
  ArrayRef b;          // k x n; likewise
  const float* c = nullptr;  // m x n host array, may be null when beta == 0
  float alpha = 1.0f;
  float beta = 0.0f;
};

// Counters of the ingest path since the engine started (for the stats RPC).
struct EngineStats {
  uint64_t batches = 0;        // Apply calls completed
  uint64_t items = 0;          // ingest items (messages or message parts) applied
  uint64_t samples = 0;
  uint64_t bytes = 0;          // sample bytes applied
  uint64_t in_flight = 0;      // Apply calls submitted and not yet done
  double copy_seconds = 0;     // host-to-device copies (0 for the CPU engine)
  double kernel_seconds = 0;   // histogram kernels, or CPU apply time
};

class Engine {
 public:
  using ApplyDone = std::function<void(absl::Status, std::vector<IngestItemResult>)>;

  virtual ~Engine() = default;

  // A short description, e.g. "cpu (16 threads)" or "cuda:0 NVIDIA H100 80GB HBM3".
  virtual std::string name() const = 0;
  // Where histograms live, e.g. "cpu" or "cuda:0".
  virtual std::string device() const = 0;
  virtual EngineStats stats() const { return {}; }
  // Bytes of memory of each device that holds histograms; empty when histograms live in
  // host memory (the CPU engine). The server sizes one device budget per entry from it.
  virtual std::vector<uint64_t> device_memory_bytes() const { return {}; }
  // The budgets, one per device_memory_bytes() entry in its order, that each device's
  // memory is reserved against before it is allocated: a histogram's bins
  // (HistogramShape::storage_bytes()) at CreateHistogram, and the device memory of compute
  // calls and reads (inputs copied to the device, results, workspaces, scratch). What does
  // not fit is RESOURCE_EXHAUSTED naming the budget. None (the default): nothing is
  // reserved. Set once, before the engine serves; the budgets outlive the engine. Engines
  // without device memory ignore them.
  virtual void SetDeviceMemoryBudgets(std::vector<DeviceMemoryBudget*> /*budgets*/) {}

  // ---- histograms ----
  // Zeroed bins. RESOURCE_EXHAUSTED when memory runs out.
  virtual absl::StatusOr<std::unique_ptr<HistogramStorage>> CreateHistogram(
      const HistogramShape& shape) = 0;
  virtual absl::Status Reset(HistogramStorage& histogram) = 0;
  // Writes every bin (rows * cols bytes, row-major u8) to host memory `out`, then zeroes the
  // storage (bytes_used() bytes, padding included), as one step ordered against Apply
  // exactly as Reset is: the samples of an Apply that returned before this call are in
  // `out` and not in the zeroed bins, those of an Apply called after it returned are not in
  // `out`, and a concurrent Apply lands wholly on one side. On an error, `out` and the bins
  // are unspecified.
  virtual absl::Status ReadAndReset(HistogramStorage& histogram, void* out) = 0;
  // target = min(target.cap, target + source), bin by bin. Shapes (rows, cols) must match:
  // INVALID_ARGUMENT otherwise. Engines accept source == target (doubling, saturating); the
  // server refuses it (HistogramStore::Merge, INVALID_ARGUMENT).
  virtual absl::Status Merge(const HistogramStorage& source, HistogramStorage& target) = 0;
  // target = min(target.cap, target + bins), bin by bin, from host memory holding
  // target.shape().bins() bytes: merging across devices, restoring a snapshot.
  virtual absl::Status MergeFromHost(const uint8_t* bins, HistogramStorage& target) = 0;
  virtual absl::StatusOr<HistogramSummary> Summarize(const HistogramStorage& histogram) = 0;
  // Writes the region (see ReadSpec) to out, which holds at least ReadBinsBytes(spec). An
  // empty region (no rows or no columns) writes nothing and leaves out untouched.
  virtual absl::Status ReadBins(const HistogramStorage& histogram, const ReadSpec& spec,
                                void* out) = 0;

  // ---- ingest ----
  virtual absl::StatusOr<std::unique_ptr<StagingBuffer>> CreateStagingBuffer(size_t bytes) = 0;
  // Prepares `bytes` of host memory at `data` (mapped read-only, page-aligned, outliving
  // the result) to be read by Apply in place (IngestItem::region). nullptr: this engine
  // does not read regions; the caller stages their samples instead.
  virtual absl::StatusOr<std::unique_ptr<HostRegion>> RegisterHostRegion(const uint8_t* data,
                                                                        size_t bytes) {
    (void)data;
    (void)bytes;
    return nullptr;
  }
  // Folds every item's samples into its histogram. Staged samples are already validated by
  // the caller (indices < bins). Region items are validated here, by the engine, before
  // any of their samples is applied: an item with a bin index >= bins is applied not at
  // all and reported in its result (IngestItemResult::invalid, first_invalid,
  // first_invalid_value); a region item's NaN coordinates are counted in x_nan / y_nan.
  // The other items of the batch are not affected. A bin index is never written out of
  // bounds, even when a misbehaving producer rewrites its region while the engine reads it
  // (IngestItemResult::out_of_range).
  // Calls `done` exactly once, possibly on
  // another thread and possibly before Apply returns, when every sample is visible to
  // reads; results has one entry per item. The staging buffer and every item's region must
  // stay untouched until then.
  virtual void Apply(const StagingBuffer& staging, std::vector<IngestItem> items,
                     ApplyDone done) = 0;

  // ---- compute (see array.h for the result types) ----
  // Float sums: reductions accumulate in double on every engine. Scans of float32 may
  // accumulate in float32 (the CUDA engine does along rows and flattened, as CUB does); each
  // prefix is then within about (log2(n) + n / 1024 + 16) * 2^-24 * sum |x| of the exact value.
  // Sum, min or max; MIN/MAX propagate NaN, and over an empty extent fail with
  // INVALID_ARGUMENT; SUM over an empty extent is 0.
  virtual absl::StatusOr<HostArray> Reduce(const ArrayRef& input, ReduceOp op, Dim collapse) = 0;
  // Inclusive or exclusive prefix sum, output type SumType(input.dtype), same shape.
  virtual absl::StatusOr<HostArray> Scan(const ArrayRef& input, bool inclusive, Dim along) = 0;
  // cols x rows, same dtype.
  virtual absl::StatusOr<HostArray> Transpose(const ArrayRef& input) = 0;
  // alpha * a @ b + beta * c as a float32 m x n array.
  virtual absl::StatusOr<HostArray> Matmul(const MatmulArgs& args) = 0;
};

// The blocks of the region's rows and columns for `spec` (engine/read_blocks.h).
BlockAxis ReadRowBlocks(const ReadSpec& spec);
BlockAxis ReadColBlocks(const ReadSpec& spec);
// Output bytes of ReadBins for `spec`, and its shape.
uint64_t ReadBinsRows(const ReadSpec& spec);
uint64_t ReadBinsCols(const ReadSpec& spec);
DType ReadBinsType(const ReadSpec& spec);
// True when every block is one bin: the output is the region's bins themselves (kU8).
bool ReadBinsAsStored(const ReadSpec& spec);
uint64_t ReadBinsBytes(const ReadSpec& spec);

// The shape of a compute operation's result, from the operation's check below; every size
// in it was computed with checked arithmetic (model/checked_size.h), so `bytes` is exact.
struct ResultShape {
  DType dtype = DType::kU8;
  uint64_t rows = 0;
  uint64_t cols = 0;
  uint64_t bytes = 0;
  uint64_t elements() const { return rows * cols; }  // fits: bytes did
};

// Checks shared by every engine (the can_implement of each operation): shapes, types,
// regions. Each returns INVALID_ARGUMENT with a message naming what is wrong.
//
// The compute checks return the result's shape. Callers that take requests (the server)
// compare its bytes with their limits and budget before calling the engine; an engine
// allocates exactly that result and returns at once when it or the input is empty, so no
// operation loops over an extent that has no elements.
absl::StatusOr<ResultShape> ReduceResultShape(const ArrayRef& input, ReduceOp op,
                                              Dim collapse);
absl::StatusOr<ResultShape> ScanResultShape(const ArrayRef& input, Dim along);
absl::StatusOr<ResultShape> TransposeResultShape(const ArrayRef& input);
absl::StatusOr<ResultShape> MatmulResultShape(const MatmulArgs& args);
// Working bytes of a matmul beside its inputs and result: histogram operands are widened
// to float32 copies (4 bytes a bin) on every engine.
uint64_t MatmulWorkingBytes(const MatmulArgs& args);

absl::Status CheckHistogramShape(const HistogramShape& shape);
absl::Status CheckReadSpec(const HistogramShape& shape, const ReadSpec& spec);
absl::Status CheckArray(const ArrayRef& a);
absl::Status CheckReduce(const ArrayRef& input, ReduceOp op, Dim collapse);
absl::Status CheckMatmul(const MatmulArgs& args);
// Merge needs equal rows and cols (caps may differ).
absl::Status CheckMerge(const HistogramShape& source, const HistogramShape& target);
// What Apply relies on to stay in bounds: each item names a histogram, lies inside the
// staging buffer, is aligned for its sample kind, and (coordinates) has finite axes with
// lo < hi. INVALID_ARGUMENT names the item ("ingest item 3: ...").
absl::Status CheckIngestItems(const StagingBuffer& staging, const std::vector<IngestItem>& items);

}  // namespace histd
