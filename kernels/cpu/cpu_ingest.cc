#include "kernels/cpu/cpu_ingest.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_format.h"
#include "kernels/histogram_types.h"

namespace histd {
namespace {

// Samples per task: large enough to amortize scheduling, small enough that one skewed
// item still spreads over every thread.
constexpr uint64_t kSamplesPerTask = 1 << 14;

inline void SaturatingIncrement(uint8_t* bin, uint8_t cap) {
  uint8_t v = __atomic_load_n(bin, __ATOMIC_RELAXED);
  while (v < cap) {
    // On failure v is reloaded with the bin's current value. Relaxed is enough: readers
    // synchronize through the histogram's mutex, not through the bins.
    if (__atomic_compare_exchange_n(bin, &v, static_cast<uint8_t>(v + 1), /*weak=*/true,
                                    __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
      return;
    }
  }
}

struct Task {
  size_t item;
  uint64_t begin, end;  // samples of the item
};

struct TaskResult {
  IngestItemResult result;
  uint64_t out_of_range = 0;
};

void IngestIndices(const uint32_t* indices, uint64_t n, uint8_t* bins, uint64_t num_bins,
                   uint8_t cap, TaskResult* out) {
  uint64_t bad = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const uint32_t index = indices[i];
    if (index >= num_bins) {
      ++bad;
      continue;
    }
    SaturatingIncrement(bins + index, cap);
  }
  out->result.binned = n - bad;
  out->out_of_range = bad;
}

void IngestCoords(const float* xy, uint64_t n, const IngestItem& item, uint8_t* bins,
                  const HistogramShape& shape, TaskResult* out) {
  const float x_scale = AxisScale(item.x.lo, item.x.hi, shape.cols);
  const float y_scale = AxisScale(item.y.lo, item.y.hi, shape.rows);
  IngestItemResult& r = out->result;
  for (uint64_t i = 0; i < n; ++i) {
    const int64_t col = AxisBin(xy[2 * i], item.x.lo, item.x.hi, x_scale, shape.cols);
    const int64_t row = AxisBin(xy[2 * i + 1], item.y.lo, item.y.hi, y_scale, shape.rows);
    r.x_underflow += col == -1;
    r.x_overflow += col == -2;
    r.y_underflow += row == -1;
    r.y_overflow += row == -2;
    if (col < 0 || row < 0) continue;
    ++r.binned;
    SaturatingIncrement(bins + static_cast<uint64_t>(row) * shape.cols + col, shape.cap);
  }
}

}  // namespace

absl::Status CheckCpuIngestItems(const StagingBuffer& staging,
                                 const std::vector<IngestItem>& items,
                                 std::vector<const CpuHistogram*>* histograms) {
  if (absl::Status s = CheckIngestItems(staging, items); !s.ok()) return s;
  histograms->assign(items.size(), nullptr);
  for (size_t i = 0; i < items.size(); ++i) {
    const CpuHistogram* h = CpuHistogram::From(items[i].histogram);
    if (h == nullptr) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "ingest item %u: the histogram was not created by the cpu engine", i));
    }
    (*histograms)[i] = h;
  }
  return absl::OkStatus();
}

std::vector<IngestItemResult> CpuIngest(const uint8_t* staging,
                                        const std::vector<IngestItem>& items,
                                        const std::vector<const CpuHistogram*>& histograms,
                                        ThreadPool& pool, uint64_t* out_of_range) {
  std::vector<Task> tasks;
  for (size_t i = 0; i < items.size(); ++i) {
    for (uint64_t b = 0; b < items[i].count; b += kSamplesPerTask) {
      tasks.push_back(Task{i, b, std::min<uint64_t>(items[i].count, b + kSamplesPerTask)});
    }
  }
  std::vector<TaskResult> task_results(tasks.size());
  pool.ParallelFor(tasks.size(), 1, [&](uint64_t t0, uint64_t t1) {
    for (uint64_t t = t0; t < t1; ++t) {
      const Task& task = tasks[t];
      const IngestItem& item = items[task.item];
      const CpuHistogram& h = *histograms[task.item];
      // The caller holds h's lock shared (on its own thread): updates use atomics only.
      uint8_t* bins = h.bins_for_atomic_update();
      const uint8_t* samples = staging + item.byte_offset;
      const uint64_t n = task.end - task.begin;
      if (item.kind == SampleKind::kBinIndex) {
        const auto* indices = reinterpret_cast<const uint32_t*>(samples) + task.begin;
        IngestIndices(indices, n, bins, h.shape().bins(), h.shape().cap, &task_results[t]);
      } else {
        const auto* xy = reinterpret_cast<const float*>(samples) + 2 * task.begin;
        IngestCoords(xy, n, item, bins, h.shape(), &task_results[t]);
      }
    }
  });
  std::vector<IngestItemResult> results(items.size());
  *out_of_range = 0;
  for (size_t t = 0; t < tasks.size(); ++t) {
    IngestItemResult& r = results[tasks[t].item];
    const IngestItemResult& p = task_results[t].result;
    r.binned += p.binned;
    r.x_underflow += p.x_underflow;
    r.x_overflow += p.x_overflow;
    r.y_underflow += p.y_underflow;
    r.y_overflow += p.y_overflow;
    *out_of_range += task_results[t].out_of_range;
  }
  return results;
}

}  // namespace histd
