// CopyValidatedSamples: the fused copy + check that stages every ingest message. Sizes
// straddle its internal chunking, offenders sit anywhere (first, chunk edges, last), and the
// source is misaligned on purpose; the reference is a plain per-sample loop.
#include "server/core/ingest_validation.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tests/server/grpc/service_fixture.h"

namespace histd::server::testing {
namespace {

HistogramSpec Spec(uint32_t rows, uint32_t cols) {
  HistogramSpec spec;
  spec.name = "v";
  spec.shape.rows = rows;
  spec.shape.cols = cols;
  spec.shape.cap = 255;
  spec.x_axis = AxisRange{0, 1};
  spec.y_axis = AxisRange{0, 1};
  return spec;
}

const std::vector<size_t> kCounts = {0, 1, 7, 4095, 4096, 4097, 8191, 8192, 8193, 20000};

TEST(IngestValidationTest, BinIndicesCopyExactlyAndNameTheFirstOffender) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  const HistogramSpec spec = Spec(100, 300);
  const uint32_t bins = 100 * 300;
  for (size_t count : kCounts) {
    std::vector<size_t> offenders = {static_cast<size_t>(-1)};  // none
    if (count > 0) {
      offenders.insert(offenders.end(), {0, count - 1, count / 2, rng() % count});
      if (count > 4096) offenders.insert(offenders.end(), {4095, 4096});
    }
    for (size_t bad : offenders) {
      SCOPED_TRACE(::testing::Message() << "count " << count << " offender " << bad);
      std::vector<uint32_t> v(count);
      for (auto& x : v) x = static_cast<uint32_t>(rng() % bins);
      if (bad < count) v[bad] = (rng() % 2) ? bins : std::numeric_limits<uint32_t>::max();
      // A second offender later on: the message names the first.
      if (bad < count && bad + 1 < count) v[count - 1] = bins + 5;
      std::string src(1 + 4 * count, '\0');  // +1: a misaligned copy of the payload
      if (count > 0) std::memcpy(src.data() + 1, v.data(), 4 * count);  // (null when empty)
      const auto* p = reinterpret_cast<const uint8_t*>(src.data() + 1);
      std::vector<uint8_t> dst(4 * count + 8, 0xA5);  // poisoned
      for (uint8_t* out : {dst.data(), static_cast<uint8_t*>(nullptr)}) {
        absl::Status s = CopyValidatedSamples(spec, SampleKind::kBinIndex, p, count, out);
        if (bad >= count) {
          ASSERT_TRUE(s.ok()) << s;
          if (out != nullptr) {
            if (count > 0) EXPECT_EQ(std::memcmp(out, v.data(), 4 * count), 0);
            EXPECT_EQ(dst[4 * count], 0xA5);  // nothing written past the samples
          }
        } else {
          ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
          EXPECT_NE(s.message().find("sample " + std::to_string(bad) + ":"), std::string::npos)
              << s;
        }
      }
    }
  }
}

// Every float32 coordinate is valid (infinities and NaN are flow): the copy is exact and
// the NaNs are counted per axis.
TEST(IngestValidationTest, CoordinatesCopyExactlyAndCountNaNsPerAxis) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> coord(-1e6f, 1e6f);
  const HistogramSpec spec = Spec(10, 10);
  const float specials[] = {std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN()};
  for (size_t count : kCounts) {
    std::vector<size_t> offenders = {static_cast<size_t>(-1)};
    if (count > 0) offenders.insert(offenders.end(), {0, count - 1, rng() % count});
    for (size_t bad : offenders) {
      SCOPED_TRACE(::testing::Message() << "count " << count << " offender " << bad);
      std::vector<float> xy(2 * count);
      for (auto& c : xy) c = coord(rng);
      // Large finite values and subnormals are fine.
      if (count > 2) {
        xy[1] = std::numeric_limits<float>::max();
        xy[2] = std::numeric_limits<float>::denorm_min();
      }
      NanCounts want;
      if (bad < count) {
        const size_t axis = rng() % 2;
        const float special = specials[rng() % 3];
        xy[2 * bad + axis] = special;
        if (std::isnan(special)) (axis == 0 ? want.x : want.y) += 1;
      }
      std::string src(1 + 8 * count, '\0');
      if (count > 0) std::memcpy(src.data() + 1, xy.data(), 8 * count);  // (null when empty)
      const auto* p = reinterpret_cast<const uint8_t*>(src.data() + 1);
      std::vector<uint8_t> dst(8 * count, 0xA5);
      NanCounts nans;
      absl::Status s = CopyValidatedSamples(spec, SampleKind::kCoordXY, p, count, dst.data(), 0,
                                            CopyStores::kAuto, &nans);
      ASSERT_TRUE(s.ok()) << s;
      if (count > 0) EXPECT_EQ(std::memcmp(dst.data(), xy.data(), 8 * count), 0);
      EXPECT_EQ(nans.x, want.x);
      EXPECT_EQ(nans.y, want.y);
    }
  }
}

// Large parts take a streaming copy (non-temporal stores from the first 32-byte boundary of
// dst; head and tail words apart), or the chunked cached copy when asked. Every staging offset a part can land at (dst 4-byte
// aligned at each position within 32 bytes, and one misaligned dst that must take the
// chunked path), sizes around the streaming threshold and its 32-word steps, offenders in
// the head, the body and the tail; the bytes around dst stay poisoned.
TEST(IngestValidationTest, LargePartsCopyExactlyAtEveryDestinationOffset) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  const HistogramSpec spec = Spec(256, 8192);
  const uint32_t bins = 256 * 8192;
  constexpr size_t kGuard = 64;
  // The streaming threshold is 1024 words (4 KiB).
  for (size_t words : {size_t{1023}, size_t{1024}, size_t{1025}, size_t{1024 + 31}, size_t{1024 + 32},
                       size_t{4096 + 7}, size_t{65536 + 13}}) {
    for (size_t offset : {0, 4, 8, 12, 16, 20, 24, 28, 1, 2}) {
      for (auto [kind, stores] : {std::pair{SampleKind::kBinIndex, CopyStores::kAuto},
                                  std::pair{SampleKind::kCoordXY, CopyStores::kAuto},
                                  std::pair{SampleKind::kBinIndex, CopyStores::kCached},
                                  std::pair{SampleKind::kCoordXY, CopyStores::kCached}}) {
        const size_t element = kind == SampleKind::kBinIndex ? 4 : 8;
        const size_t count = words * 4 / element;
        if (count * element != words * 4) continue;
        std::vector<size_t> offenders = {static_cast<size_t>(-1), 0, 1, count / 2, count - 2,
                                         count - 1, rng() % count};
        for (size_t bad : offenders) {
          SCOPED_TRACE(::testing::Message() << "words " << words << " dst offset " << offset
                                            << " kind " << int(kind) << " stores " << int(stores)
                                            << " offender " << bad);
          std::vector<uint32_t> v(words);
          for (size_t i = 0; i < words; ++i) {
            if (kind == SampleKind::kBinIndex) {
              v[i] = static_cast<uint32_t>(rng() % bins);
            } else {
              const float f = static_cast<float>(rng() % 2000000) * 0.5f - 5e5f;
              std::memcpy(&v[i], &f, 4);
            }
          }
          if (bad < count) {
            if (kind == SampleKind::kBinIndex) {
              v[bad] = bins + static_cast<uint32_t>(rng() % 1000);
            } else {
              const float nan = std::numeric_limits<float>::quiet_NaN();
              std::memcpy(&v[2 * bad + rng() % 2], &nan, 4);
            }
          }
          std::vector<uint8_t> storage(4 * words + 2 * kGuard + 32, 0xA5);
          // 32-byte aligned base, then the offset under test.
          const uintptr_t base = (reinterpret_cast<uintptr_t>(storage.data()) + kGuard + 31) & ~uintptr_t{31};
          uint8_t* dst = reinterpret_cast<uint8_t*>(base) + offset;
          NanCounts nans;
          absl::Status st = CopyValidatedSamples(spec, kind, reinterpret_cast<const uint8_t*>(v.data()),
                                                 count, dst, 0, stores, &nans);
          if (bad >= count || kind == SampleKind::kCoordXY) {  // a NaN coordinate is valid
            EXPECT_EQ(nans.x + nans.y, bad < count ? 1u : 0u);
            ASSERT_TRUE(st.ok()) << st;
            EXPECT_EQ(std::memcmp(dst, v.data(), 4 * words), 0);
          } else {
            ASSERT_EQ(st.code(), absl::StatusCode::kInvalidArgument);
            EXPECT_NE(st.message().find("sample " + std::to_string(bad) + ":"), std::string::npos)
                << st;
          }
          const size_t before = static_cast<size_t>(dst - storage.data());
          for (size_t i = 0; i < before; ++i) ASSERT_EQ(storage[i], 0xA5) << "written before dst at " << i;
          for (size_t i = before + 4 * words; i < storage.size(); ++i)
            ASSERT_EQ(storage[i], 0xA5) << "written past the part at " << i - before;
        }
      }
    }
  }
}

}  // namespace
}  // namespace histd::server::testing
