// The padding contract of the CUDA engine's histograms (engine/cuda/cuda_histogram.h):
// bins allocated in whole 16-byte chunks, the padding zero at creation and still zero after
// every histogram kernel strategy (each option set of ExactOptionSweep, launched straight on
// the engine's storage), ingest through the engine, Merge, MergeFromHost and Reset; the bins
// against a CPU reference after each. Shapes whose last chunk is mostly padding (1 x 1, 1 x 3,
// 3 x 5), one bin short of and past a chunk, and a larger odd one; the last bin hammered.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kernels/common/device_buffer.h"
#include "engine/cuda/cuda_engine.h"
#include "engine/cuda/cuda_histogram.h"
#include "kernels/histogram/histogram_accumulate.h"
#include "tests/kernels/gpu_test_util.h"
#include "tests/kernels/histogram/histogram_test_util.h"
#include "tests/engine/engine_test_util.h"

namespace histd::testing {
namespace {

struct Case {
  std::unique_ptr<HistogramStorage> storage;
  std::vector<uint8_t> want;  // the reference bins
  std::string name;
};

// Checks the whole allocation as the device holds it: the bins against the reference, then
// every padding byte zero.
void ExpectBinsAndZeroPadding(const Case& c, const std::string& what) {
  const uint64_t bins = c.storage->shape().bins();
  ASSERT_EQ(c.storage->bytes_used(), PaddedBinBytes(bins)) << c.name;
  ASSERT_EQ(c.storage->bytes_used() % 16, 0u) << c.name;
  std::vector<uint8_t> raw(c.storage->bytes_used());
  ASSERT_EQ(cudaMemcpy(raw.data(), cuda::DeviceBins(*c.storage), raw.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  size_t bad = 0, first = 0;
  for (uint64_t b = 0; b < bins; ++b)
    if (raw[b] != c.want[b] && bad++ == 0) first = b;
  EXPECT_EQ(bad, 0u) << what << ", " << c.name << ": " << bad << " wrong bins; first " << first << " want "
                     << int(c.want[first]) << " got " << int(raw[first]);
  for (uint64_t b = bins; b < raw.size(); ++b)
    EXPECT_EQ(raw[b], 0) << what << ", " << c.name << ": padding byte " << b - bins << " is " << int(raw[b]);
}

// Bin indices that hit the last bin most, the first bin and the rest.
std::vector<uint32_t> HeavyIndices(std::mt19937_64& rng, uint64_t bins, size_t n) {
  std::vector<uint32_t> v(n);
  for (auto& x : v) {
    const uint64_t r = rng() % 4;
    x = static_cast<uint32_t>(r < 2 ? bins - 1 : r == 2 ? 0 : rng() % bins);
  }
  return v;
}

// One HistogramAccumulate launch of `items` (item i on cases[i % cases.size()]) on the
// engine's storage; the reference follows.
void LaunchOnStorage(std::vector<Case>& cases, const std::vector<std::vector<uint32_t>>& items,
                     const cuda::HistogramAccumulateOptions& options) {
  std::vector<uint32_t> samples;
  std::vector<cuda::HistogramWork> work;
  for (size_t i = 0; i < items.size(); ++i) {
    Case& c = cases[i % cases.size()];
    const HistogramShape& s = c.storage->shape();
    work.push_back(cuda::HistogramWork{cuda::DeviceBins(*c.storage), s.rows, s.cols, s.cap, 0, samples.size(),
                                       items[i].size(), 0, 1, 0, 1});
    samples.insert(samples.end(), items[i].begin(), items[i].end());
    RefFoldIndices(items[i].data(), items[i].size(), c.want.data(), s.cap);
  }
  auto d_samples = cuda::DeviceBuffer::Allocate(samples.size() * 4).value();
  auto d_work = cuda::DeviceBuffer::Allocate(work.size() * sizeof(work[0])).value();
  auto d_out = cuda::DeviceBuffer::Allocate(work.size() * sizeof(cuda::HistogramOutflow)).value();
  ASSERT_EQ(cudaMemcpy(d_samples.get(), samples.data(), samples.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(d_work.get(), work.data(), d_work.bytes(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemset(d_out.get(), 0, d_out.bytes()), cudaSuccess);
  cuda::HistogramAccumulateArgs args;
  args.work = d_work.as<cuda::HistogramWork>();
  args.host_work = work.data();
  args.work_count = static_cast<int>(work.size());
  args.samples = d_samples.as<uint32_t>();
  args.outflow = d_out.as<cuda::HistogramOutflow>();
  args.total_samples = samples.size();
  args.options = options;
  using cuda::HistogramAccumulate;
  ASSERT_TRUE(HistogramAccumulate::can_implement(args).ok());
  auto ws = cuda::DeviceBuffer::Allocate(HistogramAccumulate::get_workspace_size(args)).value();
  if (ws.bytes() != 0) PoisonDevice(ws.get(), ws.bytes());
  const absl::Status st = HistogramAccumulate::run(args, ws.get(), nullptr);
  ASSERT_TRUE(st.ok()) << st;
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

TEST(CudaHistogramPadding, PaddingStaysZeroUnderEveryKernelAndEngineOp) {
  HISTD_REQUIRE_GPU();
  absl::StatusOr<std::unique_ptr<Engine>> engine = MakeCudaEngine(0);
  ASSERT_TRUE(engine.ok()) << engine.status();
  Engine& e = **engine;
  std::mt19937_64 rng(TestSeed() ^ 0x9AD);
  const uint32_t shapes[][2] = {{1, 1}, {1, 3}, {3, 5}, {1, 15}, {1, 16}, {1, 17}, {37, 101}};
  const uint8_t caps[] = {255, 2, 254, 1, 255, 7, 255};
  std::vector<Case> cases;
  for (size_t k = 0; k < std::size(shapes); ++k) {
    Case c;
    absl::StatusOr<std::unique_ptr<HistogramStorage>> h = e.CreateHistogram(HistogramShape{shapes[k][0], shapes[k][1], caps[k]});
    ASSERT_TRUE(h.ok()) << h.status();
    c.storage = std::move(*h);
    c.want.assign(c.storage->shape().bins(), 0);
    c.name = std::to_string(shapes[k][0]) + " x " + std::to_string(shapes[k][1]) + " cap " + std::to_string(caps[k]);
    ExpectBinsAndZeroPadding(c, "created");
    cases.push_back(std::move(c));
  }
  // Every strategy and config on the engine's storage: two items per histogram.
  for (const auto& [name, options] : ExactOptionSweep()) {
    std::vector<std::vector<uint32_t>> items;
    for (int i = 0; i < 2; ++i)
      for (const Case& c : cases) items.push_back(HeavyIndices(rng, c.storage->shape().bins(), Scaled(3000, 600)));
    LaunchOnStorage(cases, items, options);
    for (const Case& c : cases) ExpectBinsAndZeroPadding(c, "kernel [" + name + "]");
  }
  for (Case& c : cases) {
    const uint64_t bins = c.storage->shape().bins();
    const uint8_t cap = c.storage->shape().cap;
    const std::vector<uint32_t> heavy = HeavyIndices(rng, bins, 5000);
    ApplyIndices(e, *c.storage, heavy);  // the engine's own launch
    RefFoldIndices(heavy.data(), heavy.size(), c.want.data(), cap);
    ExpectBinsAndZeroPadding(c, "engine ingest");
    ASSERT_TRUE(e.Reset(*c.storage).ok());
    std::fill(c.want.begin(), c.want.end(), 0);
    ExpectBinsAndZeroPadding(c, "reset");
    const std::vector<uint32_t> idx = HeavyIndices(rng, bins, 700);
    ApplyIndices(e, *c.storage, idx);
    RefFoldIndices(idx.data(), idx.size(), c.want.data(), cap);
    ASSERT_TRUE(e.Merge(*c.storage, *c.storage).ok());  // doubles, saturating
    for (auto& b : c.want) b = static_cast<uint8_t>(std::min<int>(cap, 2 * b));
    ExpectBinsAndZeroPadding(c, "merge into itself");
    std::vector<uint8_t> host(bins);
    for (auto& b : host) b = static_cast<uint8_t>(rng());
    ASSERT_TRUE(e.MergeFromHost(host.data(), *c.storage).ok());
    for (uint64_t b = 0; b < bins; ++b) c.want[b] = static_cast<uint8_t>(std::min<int>(cap, c.want[b] + host[b]));
    ExpectBinsAndZeroPadding(c, "merge from host");
  }
}

}  // namespace
}  // namespace histd::testing
