// Regression (issue 31, 10): histctl's sample readers take what numpy writes by default —
// int64 (and int32, uint64, uint8) indices, float64 coordinates, numpy.savetxt's float text
// for indices — converting to the wire types when every value fits, and naming the position
// and value of one that does not.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "client/io/npy.h"
#include "client/io/sample_reader.h"
#include "gtest/gtest.h"
#include "tests/client/client_test_util.h"

namespace histd::client {
namespace {

using test::TempDir;
using test::WriteFile;

template <typename T>
std::string Bytes(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// Every sample, read `chunk` at a time; the first error, if any.
absl::StatusOr<std::string> ReadAll(io::SampleReader& reader, size_t chunk) {
  std::string out;
  while (true) {
    absl::StatusOr<size_t> got = reader.Read(chunk, &out);
    if (!got.ok()) return got.status();
    if (*got == 0) return out;
  }
}

TEST(SampleConversionTest, IntegerNpyIndicesConvertWhenTheyFit) {
  TempDir dir;
  const std::vector<uint32_t> want{0, 7, 65536, 4294967295u, 3};
  struct Case {
    v1::DType dtype;
    std::string data;
    std::vector<uint64_t> shape;
  };
  const std::vector<Case> cases = {
      {v1::DTYPE_I64, Bytes(std::vector<int64_t>{0, 7, 65536, 4294967295, 3}), {5}},
      {v1::DTYPE_U64, Bytes(std::vector<uint64_t>{0, 7, 65536, 4294967295u, 3}), {5, 1}},
      {v1::DTYPE_U32, Bytes(want), {5}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(v1::DType_Name(c.dtype));
    const std::string path = dir.Path(v1::DType_Name(c.dtype) + ".npy");
    WriteFile(path, io::EncodeNpyHeader(c.dtype, c.shape) + c.data);
    absl::StatusOr<std::unique_ptr<io::SampleReader>> r = io::OpenSampleReader(path);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ((*r)->type(), v1::SAMPLE_TYPE_BIN_INDEX_U32);
    EXPECT_EQ(*(*r)->total_samples(), 5u);
    EXPECT_EQ((*r)->conversion().empty(), c.dtype == v1::DTYPE_U32);
    absl::StatusOr<std::string> got = ReadAll(**r, 2);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, Bytes(want));
  }
  const std::string i32 = dir.Path("i32.npy");
  WriteFile(i32, io::EncodeNpyHeader(v1::DTYPE_I32, {3}) + Bytes(std::vector<int32_t>{5, 0, 9}));
  absl::StatusOr<std::unique_ptr<io::SampleReader>> r = io::OpenSampleReader(i32);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*ReadAll(**r, 10), Bytes(std::vector<uint32_t>{5, 0, 9}));
  const std::string u8 = dir.Path("u8.npy");
  WriteFile(u8, io::EncodeNpyHeader(v1::DTYPE_U8, {3}) + std::string("\x01\xff\x00", 3));
  r = io::OpenSampleReader(u8);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*ReadAll(**r, 10), Bytes(std::vector<uint32_t>{1, 255, 0}));
  // Raw files named by their element type convert the same way.
  const std::string raw = dir.Path("idx.i64");
  WriteFile(raw, Bytes(std::vector<int64_t>{4, 2}));
  r = io::OpenSampleReader(raw);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*ReadAll(**r, 10), Bytes(std::vector<uint32_t>{4, 2}));
}

TEST(SampleConversionTest, IndicesThatDoNotFitAreNamedByPositionAndValue) {
  TempDir dir;
  const std::string negative = dir.Path("neg.npy");
  WriteFile(negative,
            io::EncodeNpyHeader(v1::DTYPE_I64, {4}) + Bytes(std::vector<int64_t>{1, 2, -1, 3}));
  absl::StatusOr<std::unique_ptr<io::SampleReader>> r = io::OpenSampleReader(negative);
  ASSERT_TRUE(r.ok()) << r.status();
  std::string out;
  ASSERT_EQ(*(*r)->Read(2, &out), 2u);  // the first two are fine
  absl::StatusOr<size_t> bad = (*r)->Read(2, &out);
  ASSERT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "sample 2 is -1")) << bad.status();
  EXPECT_EQ(out.size(), 8u);  // nothing of the failed read was handed out

  const std::string big = dir.Path("big.npy");
  WriteFile(big, io::EncodeNpyHeader(v1::DTYPE_U64, {2}) +
                     Bytes(std::vector<uint64_t>{0, uint64_t{1} << 32}));
  r = io::OpenSampleReader(big);
  ASSERT_TRUE(r.ok()) << r.status();
  absl::StatusOr<std::string> all = ReadAll(**r, 100);
  ASSERT_EQ(all.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(all.status().message(), "sample 1 is 4294967296"))
      << all.status();
}

TEST(SampleConversionTest, Float64CoordinatesRoundToFloat32) {
  TempDir dir;
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> xy{0.1, -2.5, 1e300, nan, -inf, 1.0 + 1e-12};
  const std::string path = dir.Path("xy.npy");
  WriteFile(path, io::EncodeNpyHeader(v1::DTYPE_F64, {3, 2}) + Bytes(xy));
  absl::StatusOr<std::unique_ptr<io::SampleReader>> r = io::OpenSampleReader(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->type(), v1::SAMPLE_TYPE_XY_F32);
  EXPECT_TRUE(absl::StrContains((*r)->conversion(), "float32")) << (*r)->conversion();
  absl::StatusOr<std::string> got = ReadAll(**r, 2);
  ASSERT_TRUE(got.ok()) << got.status();
  ASSERT_EQ(got->size(), 24u);
  float f[6];
  std::memcpy(f, got->data(), 24);
  EXPECT_EQ(f[0], 0.1f);
  EXPECT_EQ(f[1], -2.5f);
  EXPECT_EQ(f[2], std::numeric_limits<float>::infinity());  // beyond float32: +inf
  EXPECT_TRUE(std::isnan(f[3]));
  EXPECT_EQ(f[4], -std::numeric_limits<float>::infinity());
  EXPECT_EQ(f[5], 1.0f);  // rounded to the nearest float32
}

TEST(SampleConversionTest, CsvIndicesAsNumpySavetxtWritesThem) {
  TempDir dir;
  const std::string path = dir.Path("idx.csv");
  WriteFile(path, "0.000000000000000000e+00\n4.294967295000000000e+09\n17\n1.2e1\n");
  absl::StatusOr<std::unique_ptr<io::SampleReader>> r = io::OpenSampleReader(path);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->type(), v1::SAMPLE_TYPE_BIN_INDEX_U32);
  absl::StatusOr<std::string> got = ReadAll(**r, 3);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, Bytes(std::vector<uint32_t>{0, 4294967295u, 17, 12}));
  for (const std::string bad : {"-1", "4294967296", "2.5", "nan", "1e10"}) {
    const std::string p = dir.Path("bad.csv");
    WriteFile(p, "3\n" + bad + "\n");
    r = io::OpenSampleReader(p);
    ASSERT_TRUE(r.ok()) << r.status();
    absl::StatusOr<std::string> all = ReadAll(**r, 10);
    ASSERT_EQ(all.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_TRUE(absl::StrContains(all.status().message(), "line 2")) << all.status();
    EXPECT_TRUE(absl::StrContains(all.status().message(), "'" + bad + "'")) << all.status();
  }
}

}  // namespace
}  // namespace histd::client
