#include "engine/cpu/cpu_histogram.h"

#include <algorithm>
#include <functional>
#include <new>

#include "absl/strings/str_format.h"

namespace histd {

absl::StatusOr<std::unique_ptr<CpuHistogram>> CpuHistogram::Create(const HistogramShape& shape) {
  std::unique_ptr<uint8_t[]> bins;
  try {
    bins.reset(new uint8_t[shape.bins()]());
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "cpu engine: cannot allocate %u bytes for a %u x %u histogram", shape.bins(),
        shape.rows, shape.cols));
  }
  return std::unique_ptr<CpuHistogram>(new CpuHistogram(shape, std::move(bins)));
}

HistogramLocks::HistogramLocks(std::vector<const CpuHistogram*> histograms, Mode mode)
    : locked_(std::move(histograms)), mode_(mode) {
  std::sort(locked_.begin(), locked_.end(), std::less<const CpuHistogram*>());
  locked_.erase(std::unique(locked_.begin(), locked_.end()), locked_.end());
  for (const CpuHistogram* h : locked_) {
    if (mode_ == Mode::kShared) {
      h->mu().ReaderLock();
    } else {
      h->mu().Lock();
    }
  }
}

HistogramLocks::~HistogramLocks() {
  for (auto it = locked_.rbegin(); it != locked_.rend(); ++it) {
    if (mode_ == Mode::kShared) {
      (*it)->mu().ReaderUnlock();
    } else {
      (*it)->mu().Unlock();
    }
  }
}

}  // namespace histd
