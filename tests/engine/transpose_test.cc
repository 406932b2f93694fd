// Engine::Transpose for every dtype (1-, 4- and 8-byte elements), against ref::Transpose:
// empty, 1 x N, N x 1, sizes that are multiples of no tile, histogram inputs. Exact.
#include <cstdint>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "engine/engine.h"
#include "tests/engine/engine_test_util.h"
#include "tests/engine/reference.h"

namespace histd {
namespace {

using testing::HostRef;

class TransposeTest : public testing::EngineTest {
 public:
  template <typename T>
  void ExpectMatches(const std::vector<T>& x, const ArrayRef& input) {
    SCOPED_TRACE(::testing::Message() << DTypeName(input.dtype) << " " << input.rows << " x "
                                      << input.cols);
    absl::StatusOr<HostArray> got = engine().Transpose(input);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(got->dtype, input.dtype);
    ASSERT_EQ(got->rows, input.cols);
    ASSERT_EQ(got->cols, input.rows);
    const std::vector<T> want = ref::Transpose(x, input.rows, input.cols);
    ASSERT_EQ(got->bytes.size(), want.size() * sizeof(T));
    // Bytewise: exact for floats too (NaN payloads and signed zeros included).
    EXPECT_TRUE(want.empty() || std::memcmp(got->bytes.data(), want.data(), got->bytes.size()) == 0);
  }

  template <typename T>
  void SweepShapes(std::mt19937_64& rng) {
    struct Shape { uint64_t rows, cols; };
    const Shape shapes[] = {{0, 0},   {0, 5},    {5, 0},      {1, 1},      {1, 31},
                            {33, 1},  {17, 129}, {65, 63},    {1000, 1003}, {1, 100003},
                            {100003, 1}, {3, 40001}};
    for (const Shape& s : shapes) {
      const std::vector<T> x = testing::RandomArray<T>(rng, s.rows * s.cols);
      ExpectMatches(x, HostRef(x, s.rows, s.cols));
    }
  }
};
HISTD_INSTANTIATE_ENGINE_TEST(TransposeTest);

TEST_P(TransposeTest, U8) { HISTD_SEEDED_RNG(rng); SweepShapes<uint8_t>(rng); }
TEST_P(TransposeTest, I32) { HISTD_SEEDED_RNG(rng); SweepShapes<int32_t>(rng); }
TEST_P(TransposeTest, I64) { HISTD_SEEDED_RNG(rng); SweepShapes<int64_t>(rng); }
TEST_P(TransposeTest, U32) { HISTD_SEEDED_RNG(rng); SweepShapes<uint32_t>(rng); }
TEST_P(TransposeTest, U64) { HISTD_SEEDED_RNG(rng); SweepShapes<uint64_t>(rng); }
TEST_P(TransposeTest, F32) { HISTD_SEEDED_RNG(rng); SweepShapes<float>(rng); }
TEST_P(TransposeTest, F64) { HISTD_SEEDED_RNG(rng); SweepShapes<double>(rng); }

TEST_P(TransposeTest, TwiceIsTheIdentity) {
  HISTD_SEEDED_RNG(rng);
  const std::vector<double> x = testing::RandomArray<double>(rng, 37 * 91);
  auto once = engine().Transpose(HostRef(x, 37, 91));
  ASSERT_TRUE(once.ok());
  auto twice = engine().Transpose(once->ref());
  ASSERT_TRUE(twice.ok());
  EXPECT_EQ(twice->rows, 37u);
  EXPECT_EQ(std::vector<double>(twice->data<double>(), twice->data<double>() + x.size()), x);
}

TEST_P(TransposeTest, HistogramInput) {
  HISTD_SEEDED_RNG(rng);
  for (auto [rows, cols] : {std::pair<uint32_t, uint32_t>{1, 1}, {1, 99}, {99, 1}, {70, 131}}) {
    auto h = testing::NewHistogram(engine(), rows, cols, 255);
    ASSERT_NE(h, nullptr);
    const std::vector<uint8_t> bins = testing::RandomBins(rng, uint64_t{rows} * cols, 255);
    testing::FillHistogram(engine(), *h, bins, rng);
    ExpectMatches(bins, testing::HistogramRef(*h));
  }
}

TEST_P(TransposeTest, BadInputIsInvalidArgument) {
  std::vector<float> x(6);
  ArrayRef a = HostRef(x, 2, 3);
  a.host = nullptr;
  EXPECT_EQ(engine().Transpose(a).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace histd
