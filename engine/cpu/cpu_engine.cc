#include "engine/cpu/cpu_engine.h"

#include <cstdlib>
#include <new>

#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "engine/cancellation.h"
#include "engine/cpu/cpu_compute.h"
#include "engine/cpu/cpu_histogram.h"
#include "engine/cpu/cpu_ingest.h"
#include "engine/cpu/cpu_read.h"
#include "engine/host_cpus.h"

namespace histd {
namespace {

using Mode = HistogramLocks::Mode;

// 64-byte aligned host memory (a cache line; AVX-512 loads).
class CpuStagingBuffer final : public StagingBuffer {
 public:
  static absl::StatusOr<std::unique_ptr<StagingBuffer>> Create(size_t bytes) {
    constexpr size_t kAlign = 64;
    if (bytes > SIZE_MAX - kAlign) {
      return absl::ResourceExhaustedError(
          absl::StrFormat("cpu engine: a %u-byte staging buffer is too large", bytes));
    }
    const size_t rounded = std::max(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
    void* data = std::aligned_alloc(kAlign, rounded);
    if (data == nullptr) {
      return absl::ResourceExhaustedError(
          absl::StrFormat("cpu engine: cannot allocate a %u-byte staging buffer", bytes));
    }
    return std::unique_ptr<StagingBuffer>(
        new CpuStagingBuffer(static_cast<uint8_t*>(data), bytes));
  }
  ~CpuStagingBuffer() override { std::free(data()); }

 private:
  CpuStagingBuffer(uint8_t* data, size_t capacity) : StagingBuffer(data, capacity) {}
};

absl::StatusOr<const CpuHistogram*> AsCpu(const HistogramStorage* storage, const char* what) {
  const CpuHistogram* h = CpuHistogram::From(storage);
  if (h == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: the histogram was not created by the cpu engine", what));
  }
  return h;
}

// An array input as host memory: its own bytes, or its histogram's bins while `locks`
// (exclusive) lives. Run CheckArray first.
absl::StatusOr<HostView> ResolveInput(const ArrayRef& a, const char* what,
                                      std::vector<const CpuHistogram*>* to_lock) {
  HostView view{a.dtype, a.rows, a.cols, a.host};
  if (a.histogram != nullptr) {
    absl::StatusOr<const CpuHistogram*> h = AsCpu(a.histogram, what);
    if (!h.ok()) return h.status();
    to_lock->push_back(*h);
    view.data = (*h)->bins_for_partitioned_update();  // read once the caller locks exclusive
  }
  return view;
}

// A compute result, or the caller's cancellation when it gave up meanwhile (its loops then
// skipped chunks: the result is incomplete).
absl::StatusOr<HostArray> UnlessCancelled(absl::StatusOr<HostArray> result) {
  if (absl::Status s = CheckCancellation(); !s.ok()) return s;
  return result;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Engine>> MakeCpuEngine(int threads) {
  if (threads < 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("cpu engine threads must be >= 0 (0 = all), got %d", threads));
  }
  if (threads == 0) threads = AvailableCpus();
  return std::unique_ptr<Engine>(new CpuEngine(threads));
}

CpuEngine::CpuEngine(int threads) : pool_(threads) {}

std::string CpuEngine::name() const {
  return absl::StrFormat("cpu (%d threads)", pool_.threads());
}

absl::StatusOr<std::unique_ptr<HistogramStorage>> CpuEngine::CreateHistogram(
    const HistogramShape& shape) {
  if (absl::Status s = CheckHistogramShape(shape); !s.ok()) return s;
  absl::StatusOr<std::unique_ptr<CpuHistogram>> h = CpuHistogram::Create(shape);
  if (!h.ok()) return h.status();
  return std::unique_ptr<HistogramStorage>(std::move(*h));
}

absl::Status CpuEngine::Reset(HistogramStorage& histogram) {
  absl::StatusOr<const CpuHistogram*> h = AsCpu(&histogram, "reset");
  if (!h.ok()) return h.status();
  HistogramLocks lock({*h}, Mode::kExclusive);
  CpuReset((*h)->bins(), (*h)->shape().bins(), pool_);
  return absl::OkStatus();
}

absl::Status CpuEngine::ReadAndReset(HistogramStorage& histogram, void* out) {
  absl::StatusOr<const CpuHistogram*> h = AsCpu(&histogram, "read and reset");
  if (!h.ok()) return h.status();
  if (out == nullptr) return absl::InvalidArgumentError("read and reset: no output buffer");
  HistogramLocks lock({*h}, Mode::kExclusive);  // as Reset: no Apply half done on either side
  // No padding on the CPU engine: bytes_used() == shape().bins(), all of them copied.
  CpuReadAndReset((*h)->bins(), (*h)->shape().bins(), out, pool_);
  return absl::OkStatus();
}

absl::Status CpuEngine::Merge(const HistogramStorage& source, HistogramStorage& target) {
  absl::StatusOr<const CpuHistogram*> s = AsCpu(&source, "merge source");
  if (!s.ok()) return s.status();
  absl::StatusOr<const CpuHistogram*> t = AsCpu(&target, "merge target");
  if (!t.ok()) return t.status();
  const HistogramShape& ts = target.shape();
  if (absl::Status st = CheckMerge(source.shape(), ts); !st.ok()) return st;
  HistogramLocks locks({*s, *t}, Mode::kExclusive);  // one lock when source == target
  CpuMerge((*s)->bins(), (*t)->bins(), ts.bins(), ts.cap, pool_);
  return absl::OkStatus();
}

absl::Status CpuEngine::MergeFromHost(const uint8_t* bins, HistogramStorage& target) {
  absl::StatusOr<const CpuHistogram*> t = AsCpu(&target, "merge target");
  if (!t.ok()) return t.status();
  if (bins == nullptr) return absl::InvalidArgumentError("merge from host: no source bins");
  HistogramLocks lock({*t}, Mode::kExclusive);
  CpuMerge(bins, (*t)->bins(), target.shape().bins(), target.shape().cap, pool_);
  return absl::OkStatus();
}

absl::StatusOr<HistogramSummary> CpuEngine::Summarize(const HistogramStorage& histogram) {
  absl::StatusOr<const CpuHistogram*> h = AsCpu(&histogram, "summarize");
  if (!h.ok()) return h.status();
  HistogramLocks lock({*h}, Mode::kExclusive);
  return CpuSummarize((*h)->bins(), (*h)->shape(), pool_);
}

absl::Status CpuEngine::ReadBins(const HistogramStorage& histogram, const ReadSpec& spec,
                                 void* out) {
  absl::StatusOr<const CpuHistogram*> h = AsCpu(&histogram, "read bins");
  if (!h.ok()) return h.status();
  if (absl::Status s = CheckReadSpec(histogram.shape(), spec); !s.ok()) return s;
  if (spec.region.rows() == 0 || spec.region.cols() == 0) return absl::OkStatus();  // empty
  if (out == nullptr) return absl::InvalidArgumentError("read bins: no output buffer");
  HistogramLocks lock({*h}, Mode::kExclusive);
  CpuReadBins((*h)->bins(), (*h)->shape(), spec, out, pool_);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<StagingBuffer>> CpuEngine::CreateStagingBuffer(size_t bytes) {
  return CpuStagingBuffer::Create(bytes);
}

namespace {
class CpuHostRegion final : public HostRegion {
 public:
  CpuHostRegion(const uint8_t* data, size_t bytes) : HostRegion(data, bytes) {}
};
}  // namespace

absl::StatusOr<std::unique_ptr<HostRegion>> CpuEngine::RegisterHostRegion(const uint8_t* data,
                                                                         size_t bytes) {
  return std::unique_ptr<HostRegion>(new CpuHostRegion(data, bytes));
}

EngineStats CpuEngine::stats() const {
  absl::MutexLock lock(&stats_mu_);
  return stats_;
}

void CpuEngine::Apply(const StagingBuffer& staging, std::vector<IngestItem> items,
                      ApplyDone done) {
  {
    absl::MutexLock lock(&stats_mu_);
    ++stats_.in_flight;
  }
  std::vector<const CpuHistogram*> histograms;
  if (absl::Status s = CheckCpuIngestItems(staging, items, &histograms); !s.ok()) {
    {
      absl::MutexLock lock(&stats_mu_);
      --stats_.in_flight;
    }
    done(s, std::vector<IngestItemResult>(items.size()));  // nothing applied
    return;
  }
  const absl::Time start = absl::Now();
  std::vector<IngestItemResult> results;
  uint64_t out_of_range = 0;
  {
    HistogramLocks locks(histograms, Mode::kExclusive);
    results = CpuIngest(staging.data(), items, histograms, pool_, &out_of_range);
  }  // unlocked before done: a read issued from done (or after it) sees every sample
  const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
  {
    absl::MutexLock lock(&stats_mu_);
    --stats_.in_flight;
    ++stats_.batches;
    stats_.items += items.size();
    for (size_t i = 0; i < items.size(); ++i) {
      if (results[i].invalid > 0) continue;  // a region item rejected whole: nothing applied
      stats_.samples += items[i].count;
      stats_.bytes += items[i].count * SampleBytes(items[i].kind);
    }
    stats_.kernel_seconds += seconds;
  }
  (void)out_of_range;  // per item, in results (IngestItemResult::out_of_range)
  done(absl::OkStatus(), std::move(results));
}

absl::StatusOr<HostArray> CpuEngine::Reduce(const ArrayRef& input, ReduceOp op, Dim collapse) {
  absl::StatusOr<ResultShape> shape = ReduceResultShape(input, op, collapse);
  if (!shape.ok()) return shape.status();
  // Nothing to read: sums of empty extents are zero (min and max were refused above).
  if (input.elements() == 0) return AllocateHostArray(shape->dtype, shape->rows, shape->cols);
  std::vector<const CpuHistogram*> to_lock;
  absl::StatusOr<HostView> in = ResolveInput(input, "reduce", &to_lock);
  if (!in.ok()) return in.status();
  HistogramLocks locks(to_lock, Mode::kExclusive);
  return UnlessCancelled(CpuReduce(*in, op, collapse, pool_));
}

absl::StatusOr<HostArray> CpuEngine::Scan(const ArrayRef& input, bool inclusive, Dim along) {
  absl::StatusOr<ResultShape> shape = ScanResultShape(input, along);
  if (!shape.ok()) return shape.status();
  if (shape->bytes == 0) return AllocateHostArray(shape->dtype, shape->rows, shape->cols);
  std::vector<const CpuHistogram*> to_lock;
  absl::StatusOr<HostView> in = ResolveInput(input, "scan", &to_lock);
  if (!in.ok()) return in.status();
  HistogramLocks locks(to_lock, Mode::kExclusive);
  return UnlessCancelled(CpuScan(*in, inclusive, along, pool_));
}

absl::StatusOr<HostArray> CpuEngine::Transpose(const ArrayRef& input) {
  absl::StatusOr<ResultShape> shape = TransposeResultShape(input);
  if (!shape.ok()) return shape.status();
  if (shape->bytes == 0) return AllocateHostArray(shape->dtype, shape->rows, shape->cols);
  std::vector<const CpuHistogram*> to_lock;
  absl::StatusOr<HostView> in = ResolveInput(input, "transpose", &to_lock);
  if (!in.ok()) return in.status();
  HistogramLocks locks(to_lock, Mode::kExclusive);
  return UnlessCancelled(CpuTranspose(*in, pool_));
}

absl::StatusOr<HostArray> CpuEngine::Matmul(const MatmulArgs& args) {
  absl::StatusOr<ResultShape> shape = MatmulResultShape(args);
  if (!shape.ok()) return shape.status();
  std::vector<const CpuHistogram*> to_lock;
  absl::StatusOr<HostView> a = ResolveInput(args.a, "matmul a", &to_lock);
  if (!a.ok()) return a.status();
  absl::StatusOr<HostView> b = ResolveInput(args.b, "matmul b", &to_lock);
  if (!b.ok()) return b.status();
  // Histogram operands are widened to float32 copies under their locks.
  std::vector<float> a_bins, b_bins;
  try {
    HistogramLocks locks(to_lock, Mode::kExclusive);
    if (args.a.histogram != nullptr) {
      a_bins.resize(a->rows * a->cols);
      WidenToFloat(static_cast<const uint8_t*>(a->data), a_bins.size(), a_bins.data(), pool_);
      a->data = a_bins.data();
    }
    if (args.b.histogram != nullptr) {
      b_bins.resize(b->rows * b->cols);
      WidenToFloat(static_cast<const uint8_t*>(b->data), b_bins.size(), b_bins.data(), pool_);
      b->data = b_bins.data();
    }
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("cpu engine: out of memory widening a histogram for matmul");
  }
  if (absl::Status s = CheckCancellation(); !s.ok()) return s;
  return UnlessCancelled(CpuMatmul(static_cast<const float*>(a->data),
                                   static_cast<const float*>(b->data), args.c, a->rows, a->cols,
                                   b->cols, args.alpha, args.beta, pool_));
}

}  // namespace histd
