// Shared fixtures for engine tests: a test suite parameterized over the engines (the CPU
// engine always; the CUDA engine reports SKIPPED where it is not built or no GPU is
// visible), fresh seeded random generators, and helpers to fill and read histograms.
// Header-only so tests/cuda can include it too.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "engine/engine.h"
#include "engine/engine_factory.h"

namespace histd::testing {

// A fresh seed: $HISTD_TEST_SEED when set (to replay a failure), else std::random_device.
inline uint64_t FreshSeed() {
  if (const char* env = std::getenv("HISTD_TEST_SEED")) return std::strtoull(env, nullptr, 0);
  std::random_device device;
  return (uint64_t{device()} << 32) ^ device();
}

// Declares `std::mt19937_64 rng` freshly seeded; the seed is printed with any failure in
// the enclosing scope (replay it with HISTD_TEST_SEED=<seed>).
#define HISTD_SEEDED_RNG(rng)                                                       \
  const uint64_t rng##_seed = ::histd::testing::FreshSeed();                        \
  SCOPED_TRACE(::testing::Message() << "HISTD_TEST_SEED=" << rng##_seed);           \
  std::mt19937_64 rng(rng##_seed)

// Threads for the CPU engine in tests: more than this machine's cores, to shake out races.
inline constexpr int kTestCpuThreads = 4;

// Base fixture: engine() is the engine under test, or the test is skipped.
class EngineTest : public ::testing::TestWithParam<EngineKind> {
 protected:
  void SetUp() override {
    EngineOptions options;
    options.kind = GetParam();
    options.cpu_threads = kTestCpuThreads;
    if (GetParam() == EngineKind::kCuda && !CudaEngineAvailable())
      GTEST_SKIP() << "no CUDA engine in this build or no GPU visible";
    absl::StatusOr<std::unique_ptr<Engine>> engine = MakeEngine(options);
    // A GPU that is there but fails to give an engine is a failure, not a skip.
    if (!engine.ok()) FAIL() << engine.status();
    engine_ = std::move(*engine);
  }
  Engine& engine() { return *engine_; }

 private:
  std::unique_ptr<Engine> engine_;
};

inline std::string EngineKindName(const ::testing::TestParamInfo<EngineKind>& info) {
  return info.param == EngineKind::kCpu ? "cpu" : "cuda";
}

// Runs the suite on every engine.
#define HISTD_INSTANTIATE_ENGINE_TEST(Suite)                                               \
  INSTANTIATE_TEST_SUITE_P(Engines, Suite,                                                 \
                           ::testing::Values(::histd::EngineKind::kCpu,                    \
                                             ::histd::EngineKind::kCuda),                  \
                           ::histd::testing::EngineKindName)

template <typename T> constexpr DType DTypeOf();
template <> constexpr DType DTypeOf<uint8_t>() { return DType::kU8; }
template <> constexpr DType DTypeOf<int32_t>() { return DType::kI32; }
template <> constexpr DType DTypeOf<int64_t>() { return DType::kI64; }
template <> constexpr DType DTypeOf<uint32_t>() { return DType::kU32; }
template <> constexpr DType DTypeOf<uint64_t>() { return DType::kU64; }
template <> constexpr DType DTypeOf<float>() { return DType::kF32; }
template <> constexpr DType DTypeOf<double>() { return DType::kF64; }

template <typename T>
ArrayRef HostRef(const std::vector<T>& v, uint64_t rows, uint64_t cols) {
  return ArrayRef{DTypeOf<T>(), rows, cols, v.data(), nullptr};
}

inline ArrayRef HistogramRef(const HistogramStorage& h) {
  return ArrayRef{DType::kU8, h.shape().rows, h.shape().cols, nullptr, &h};
}

// Random elements: floats uniform in [-1, 1); 64-bit integers over their whole range (sums
// wrap); narrower integers over their whole range too.
template <typename T>
std::vector<T> RandomArray(std::mt19937_64& rng, uint64_t n) {
  std::vector<T> v(n);
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<double> dist(-1.0, 1.0);
    for (T& x : v) x = static_cast<T>(dist(rng));
  } else {
    for (T& x : v) x = static_cast<T>(rng());
  }
  return v;
}

// Applies the items synchronously; expects `done` exactly once and returns its outcome.
struct ApplyOutcome {
  absl::Status status;
  std::vector<IngestItemResult> results;
  int done_calls = 0;
};
inline ApplyOutcome ApplyAndWait(Engine& engine, const StagingBuffer& staging,
                                 std::vector<IngestItem> items) {
  auto outcome = std::make_shared<ApplyOutcome>();
  auto notification = std::make_shared<absl::Notification>();
  engine.Apply(staging, std::move(items),
               [outcome, notification](absl::Status s, std::vector<IngestItemResult> r) {
                 outcome->status = std::move(s);
                 outcome->results = std::move(r);
                 if (++outcome->done_calls == 1) notification->Notify();
               });
  notification->WaitForNotification();
  return *outcome;
}

// A staging buffer holding `bytes` at offset 0.
inline std::unique_ptr<StagingBuffer> Stage(Engine& engine, const void* bytes, size_t size) {
  absl::StatusOr<std::unique_ptr<StagingBuffer>> staging = engine.CreateStagingBuffer(size);
  EXPECT_TRUE(staging.ok()) << staging.status();
  if (!staging.ok()) return nullptr;
  if (size != 0) std::memcpy((*staging)->data(), bytes, size);
  return std::move(*staging);
}

inline std::unique_ptr<HistogramStorage> NewHistogram(Engine& engine, uint32_t rows,
                                                      uint32_t cols, uint8_t cap = 255) {
  absl::StatusOr<std::unique_ptr<HistogramStorage>> h =
      engine.CreateHistogram(HistogramShape{rows, cols, cap});
  EXPECT_TRUE(h.ok()) << h.status();
  return h.ok() ? std::move(*h) : nullptr;
}

// Applies bin indices to one histogram and expects success.
inline void ApplyIndices(Engine& engine, HistogramStorage& h,
                         const std::vector<uint32_t>& indices) {
  std::unique_ptr<StagingBuffer> staging =
      Stage(engine, indices.data(), indices.size() * sizeof(uint32_t));
  ASSERT_NE(staging, nullptr);
  IngestItem item;
  item.histogram = &h;
  item.kind = SampleKind::kBinIndex;
  item.count = indices.size();
  ApplyOutcome outcome = ApplyAndWait(engine, *staging, {item});
  ASSERT_TRUE(outcome.status.ok()) << outcome.status;
  ASSERT_EQ(outcome.results.size(), 1u);
  EXPECT_EQ(outcome.results[0].binned, indices.size());
}

// Sets every bin of an empty histogram to values[i] (each <= cap) by applying i values[i]
// times, in a shuffled order.
inline void FillHistogram(Engine& engine, HistogramStorage& h, const std::vector<uint8_t>& values,
                          std::mt19937_64& rng) {
  std::vector<uint32_t> indices;
  for (uint32_t i = 0; i < values.size(); ++i) indices.insert(indices.end(), values[i], i);
  std::shuffle(indices.begin(), indices.end(), rng);
  ApplyIndices(engine, h, indices);
}

// Random bins in [0, cap], a fraction of them exactly cap or 0.
inline std::vector<uint8_t> RandomBins(std::mt19937_64& rng, uint64_t n, uint8_t cap) {
  std::vector<uint8_t> v(n);
  for (uint8_t& x : v) {
    const uint64_t r = rng();
    x = r % 8 == 0 ? cap : r % 8 == 1 ? 0 : static_cast<uint8_t>((r >> 8) % (cap + 1u));
  }
  return v;
}

// A read of the region [r0, r1) x [c0, c1) in rf x cf blocks, optionally transposed.
inline ReadSpec Spec(uint32_t r0, uint32_t r1, uint32_t c0, uint32_t c1, uint32_t rf = 1,
                     uint32_t cf = 1, bool transpose = false) {
  ReadSpec spec;
  spec.region = Region{r0, r1, c0, c1};
  spec.row_factor = rf;
  spec.col_factor = cf;
  spec.transpose = transpose;
  return spec;
}

// The whole histogram as stored (u8, row-major).
inline std::vector<uint8_t> ReadAll(Engine& engine, const HistogramStorage& h) {
  ReadSpec spec;
  spec.region = Region{0, h.shape().rows, 0, h.shape().cols};
  std::vector<uint8_t> out(ReadBinsBytes(spec));
  absl::Status s = engine.ReadBins(h, spec, out.data());
  EXPECT_TRUE(s.ok()) << s;
  return out;
}

}  // namespace histd::testing
