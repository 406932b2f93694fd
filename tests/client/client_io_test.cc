// Client-side pieces that need no server: npy/CSV/raw readers and writers, dtype
// conversion, status mapping. (Sample readers and batching: client_samples_test.cc.)
// Random inputs are seeded; the seed is printed on failure (SCOPED_TRACE).
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <grpcpp/support/status.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/dtype.h"
#include "client/grpc_status.h"
#include "client/histd_client.h"
#include "client/io/array_file.h"
#include "client/io/csv.h"
#include "client/io/file_util.h"
#include "client/io/npy.h"
#include "client/io/sample_reader.h"
#include "client/sample_batcher.h"
#include "gtest/gtest.h"
#include "tests/client/client_test_util.h"

namespace histd::client {
namespace {

using test::ReadFile;
using test::Seed;
using test::TempDir;
using test::WriteFile;

using io::ArrayData;
using v1::DType;


const DType kAllDTypes[] = {v1::DTYPE_U8,  v1::DTYPE_I32, v1::DTYPE_I64, v1::DTYPE_U32,
                            v1::DTYPE_U64, v1::DTYPE_F32, v1::DTYPE_F64};

// Random elements of dtype; floats are finite and include negative and tiny values.
ArrayData RandomArray(DType dtype, uint64_t rows, uint64_t cols, std::mt19937_64& rng) {
  ArrayData a;
  a.dtype = dtype;
  a.rows = rows;
  a.cols = cols;
  const size_t size = DTypeSize(dtype);
  a.bytes.resize(rows * cols * size);
  for (uint64_t i = 0; i < rows * cols; ++i) {
    const uint64_t bits = rng();
    if (dtype == v1::DTYPE_F32) {
      const float v = std::ldexp(static_cast<float>(static_cast<int64_t>(bits) >> 40), static_cast<int>(bits % 40) - 30);
      std::memcpy(&a.bytes[i * size], &v, size);
    } else if (dtype == v1::DTYPE_F64) {
      const double v = std::ldexp(static_cast<double>(static_cast<int64_t>(bits) >> 11), static_cast<int>(bits % 80) - 60);
      std::memcpy(&a.bytes[i * size], &v, size);
    } else {
      std::memcpy(&a.bytes[i * size], &bits, size);
    }
  }
  return a;
}

TEST(DTypeTest, SizesNamesAndOverflow) {
  EXPECT_EQ(DTypeSize(v1::DTYPE_U8), 1u);
  EXPECT_EQ(DTypeSize(v1::DTYPE_I64), 8u);
  EXPECT_EQ(DTypeSize(v1::DTYPE_UNSPECIFIED), 0u);
  for (DType d : kAllDTypes) {
    absl::StatusOr<DType> back = ParseDType(DTypeShortName(d));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, d);
  }
  EXPECT_EQ(ParseDType("float16").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(*ArrayByteLength(v1::DTYPE_F64, 3, 5), 120u);
  EXPECT_EQ(ArrayByteLength(v1::DTYPE_U32, uint64_t{1} << 32, uint64_t{1} << 31).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(GrpcStatusTest, KeepsCodeAndMessage) {
  EXPECT_TRUE(FromGrpcStatus(grpc::Status::OK).ok());
  for (int code = 1; code <= 16; ++code) {
    const absl::Status s = FromGrpcStatus(grpc::Status(static_cast<grpc::StatusCode>(code), "why"));
    EXPECT_EQ(static_cast<int>(s.code()), code);
    EXPECT_EQ(s.message(), "why");
  }
  EXPECT_EQ(FromRpcCode(5, "gone").code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(FromRpcCode(99, "odd").code(), absl::StatusCode::kUnknown);
  EXPECT_TRUE(FromRpcCode(0, "").ok());
}

TEST(QueryHeaderTest, TotalBytesMustMatchShape) {
  v1::QueryChunk chunk;
  chunk.set_dtype(v1::DTYPE_U32);
  chunk.set_rows(3);
  chunk.set_cols(5);
  chunk.set_total_bytes(60);
  EXPECT_TRUE(CheckQueryHeader(chunk).ok());
  chunk.set_total_bytes(15);
  EXPECT_EQ(CheckQueryHeader(chunk).code(), absl::StatusCode::kInternal);
  chunk.set_dtype(v1::DTYPE_UNSPECIFIED);
  EXPECT_EQ(CheckQueryHeader(chunk).code(), absl::StatusCode::kInternal);
}

TEST(NpyTest, HeaderIsAlignedAndParsesBack) {
  const std::vector<std::vector<uint64_t>> shapes = {{}, {0}, {1}, {5}, {3, 7}, {1, 8193}, {8193, 1}, {0, 4}};
  for (DType d : kAllDTypes) {
    for (const auto& shape : shapes) {
      const std::string header = io::EncodeNpyHeader(d, shape);
      EXPECT_EQ(header.size() % 64, 0u);
      EXPECT_EQ(header.back(), '\n');
      absl::StatusOr<io::NpyHeader> parsed = io::ParseNpyHeader(header);
      ASSERT_TRUE(parsed.ok()) << parsed.status();
      EXPECT_EQ(parsed->dtype, d);
      EXPECT_EQ(parsed->shape, shape);
      EXPECT_FALSE(parsed->fortran_order);
      EXPECT_EQ(parsed->data_offset, header.size());
    }
  }
  EXPECT_TRUE(absl::StrContains(io::EncodeNpyHeader(v1::DTYPE_U8, {2}), "'descr': '|u1'"));
  EXPECT_TRUE(absl::StrContains(io::EncodeNpyHeader(v1::DTYPE_U32, {2}), "'shape': (2,)"));
  EXPECT_TRUE(absl::StrContains(io::EncodeNpyHeader(v1::DTYPE_F32, {2, 3}), "'descr': '<f4'"));
  EXPECT_TRUE(absl::StrContains(io::EncodeNpyHeader(v1::DTYPE_F32, {2, 3}), "'shape': (2, 3)"));
}

TEST(NpyTest, RoundTripsEveryDTypeAndShape) {
  const uint64_t seed = Seed();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 rng(seed);
  TempDir dir;
  const std::string path = dir.Path("a.npy");
  const std::vector<std::pair<uint64_t, uint64_t>> shapes = {{0, 0}, {1, 1}, {1, 1000}, {999, 1}, {37, 61}};
  for (DType d : kAllDTypes) {
    for (auto [rows, cols] : shapes) {
      for (bool one_d : {false, true}) {
        if (one_d && rows != 1) continue;
        ArrayData a = RandomArray(d, rows, cols, rng);
        a.one_dimensional = one_d;
        ASSERT_TRUE(io::WriteNpyArray(path, a).ok());
        absl::StatusOr<ArrayData> b = io::ReadNpyArray(path);
        ASSERT_TRUE(b.ok()) << b.status();
        EXPECT_EQ(b->dtype, d);
        EXPECT_EQ(b->rows, rows);
        EXPECT_EQ(b->cols, cols);
        EXPECT_EQ(b->one_dimensional, one_d);
        EXPECT_EQ(b->bytes, a.bytes);
        // The file is exactly header + data.
        EXPECT_EQ(ReadFile(path).size(), io::EncodeNpyHeader(d, one_d ? std::vector<uint64_t>{cols}
                                                                       : std::vector<uint64_t>{rows, cols}).size() +
                                                 a.bytes.size());
      }
    }
  }
}

// A version 2.0 header with hand-written dict, Fortran order: read back row-major.
TEST(NpyTest, ReadsVersion2AndFortranOrder) {
  TempDir dir;
  const std::string path = dir.Path("f.npy");
  const std::string dict = "{\"descr\": \"<i4\", \"fortran_order\": True, \"shape\": (2, 3)}\n";
  std::string file = std::string("\x93NUMPY\x02\x00", 8);
  const uint32_t len = dict.size();
  file.append(reinterpret_cast<const char*>(&len), 4);
  file += dict;
  // Column-major data of [[1, 2, 3], [4, 5, 6]].
  for (int32_t v : {1, 4, 2, 5, 3, 6}) file.append(reinterpret_cast<const char*>(&v), 4);
  WriteFile(path, file);
  absl::StatusOr<ArrayData> a = io::ReadNpyArray(path);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(a->rows, 2u);
  ASSERT_EQ(a->cols, 3u);
  std::vector<int32_t> got(6);
  std::memcpy(got.data(), a->bytes.data(), 24);
  EXPECT_EQ(got, (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
}

TEST(NpyTest, RejectsBadFiles) {
  TempDir dir;
  const std::string path = dir.Path("bad.npy");
  WriteFile(path, "not an npy file at all");
  EXPECT_EQ(io::ReadNpyArray(path).status().code(), absl::StatusCode::kInvalidArgument);

  const std::string big_endian = io::EncodeNpyHeader(v1::DTYPE_U32, {1});
  std::string be = big_endian;
  be.replace(be.find("<u4"), 3, ">u4");
  WriteFile(path, be + std::string(4, '\0'));
  absl::Status s = io::ReadNpyArray(path).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "big-endian")) << s;

  // Truncated data: shape says 10 elements, file has 9.
  WriteFile(path, io::EncodeNpyHeader(v1::DTYPE_U32, {10}) + std::string(36, '\0'));
  EXPECT_EQ(io::ReadNpyArray(path).status().code(), absl::StatusCode::kInvalidArgument);

  WriteFile(path, io::EncodeNpyHeader(v1::DTYPE_U8, {2, 2, 2}) + std::string(8, '\0'));
  EXPECT_EQ(io::ReadNpyArray(path).status().code(), absl::StatusCode::kInvalidArgument);

  std::string complex = io::EncodeNpyHeader(v1::DTYPE_F64, {1});
  complex.replace(complex.find("<f8"), 3, "<c8");
  WriteFile(path, complex + std::string(8, '\0'));
  EXPECT_EQ(io::ReadNpyArray(path).status().code(), absl::StatusCode::kInvalidArgument);

  EXPECT_EQ(io::ReadNpyArray(dir.Path("missing.npy")).status().code(), absl::StatusCode::kNotFound);
}

TEST(CsvTest, RoundTripsExactly) {
  const uint64_t seed = Seed();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 rng(seed);
  TempDir dir;
  const std::string path = dir.Path("a.csv");
  for (DType d : kAllDTypes) {
    for (auto [rows, cols] : std::vector<std::pair<uint64_t, uint64_t>>{{1, 1}, {1, 17}, {23, 1}, {9, 13}}) {
      ArrayData a = RandomArray(d, rows, cols, rng);
      ASSERT_TRUE(io::WriteArrayFile(path, a).ok());
      absl::StatusOr<ArrayData> b = io::ReadArrayFile(path, {io::FileFormat::kAuto, d});
      ASSERT_TRUE(b.ok()) << b.status();
      EXPECT_EQ(b->rows, rows);
      EXPECT_EQ(b->cols, cols);
      EXPECT_EQ(b->bytes, a.bytes) << DTypeShortName(d);
    }
  }
}

TEST(CsvTest, OneDimensionalIsOneValuePerLine) {
  TempDir dir;
  const std::string path = dir.Path("v.csv");
  const uint64_t values[] = {0, 7, std::numeric_limits<uint64_t>::max()};
  ASSERT_TRUE(io::WriteArrayFile(path, io::VectorU64(values, 3)).ok());
  EXPECT_EQ(ReadFile(path), "0\n7\n18446744073709551615\n");
}

TEST(CsvTest, HeaderCommentsSeparatorsAndInference) {
  TempDir dir;
  const std::string path = dir.Path("t.csv");
  WriteFile(path, "a,b,c\n# a comment\n\n1, 2 ,3\n-4;5;6\n");
  absl::StatusOr<ArrayData> a = io::ReadCsvArray(path);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->dtype, v1::DTYPE_I64);
  EXPECT_EQ(a->rows, 2u);
  EXPECT_EQ(a->cols, 3u);
  int64_t v[6];
  std::memcpy(v, a->bytes.data(), sizeof(v));
  EXPECT_EQ(v[3], -4);
  EXPECT_EQ(v[5], 6);

  WriteFile(path, "1 2\n3 4.5\n");
  a = io::ReadCsvArray(path);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->dtype, v1::DTYPE_F64);

  WriteFile(path, "1\n18446744073709551615\n");
  a = io::ReadCsvArray(path);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->dtype, v1::DTYPE_U64);

  WriteFile(path, "1,2\n3\n");
  absl::Status s = io::ReadCsvArray(path).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "line 2")) << s;

  WriteFile(path, "1\n256\n");
  s = io::ReadCsvArray(path, v1::DTYPE_U8).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "line 2")) << s;

  WriteFile(path, "1\nx\n");
  EXPECT_EQ(io::ReadCsvArray(path).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ArrayTest, RawFilesNeedTypeAndShape) {
  TempDir dir;
  const std::string path = dir.Path("m.f32");
  std::vector<float> values(12);
  for (int i = 0; i < 12; ++i) values[i] = 0.5f * i;
  WriteFile(path, std::string(reinterpret_cast<const char*>(values.data()), 48));
  io::ReadArrayOptions options;
  options.cols = 4;
  absl::StatusOr<ArrayData> a = io::ReadArrayFile(path, options);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->dtype, v1::DTYPE_F32);
  EXPECT_EQ(a->rows, 3u);
  EXPECT_EQ(a->cols, 4u);
  options.cols = 5;
  EXPECT_EQ(io::ReadArrayFile(path, options).status().code(), absl::StatusCode::kInvalidArgument);
  const std::string raw = dir.Path("m.bin");
  WriteFile(raw, "abc");
  EXPECT_EQ(io::ReadArrayFile(raw).status().code(), absl::StatusCode::kInvalidArgument);
  io::ReadArrayOptions u32;
  u32.dtype = v1::DTYPE_U32;
  EXPECT_EQ(io::ReadArrayFile(raw, u32).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(ArrayTest, ConvertChecksRangeAndNaN) {
  const double in[] = {1.9, -2.5, 3e9, std::nan("")};
  ArrayData a = io::VectorF64(in, 2);
  absl::StatusOr<ArrayData> b = io::ConvertArray(a, v1::DTYPE_I32);
  ASSERT_TRUE(b.ok()) << b.status();
  int32_t out[2];
  std::memcpy(out, b->bytes.data(), 8);
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[1], -2);
  EXPECT_EQ(io::ConvertArray(io::VectorF64(in, 3), v1::DTYPE_I32).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(io::ConvertArray(io::VectorF64(in + 3, 1), v1::DTYPE_I64).status().code(),
            absl::StatusCode::kInvalidArgument);
  absl::StatusOr<ArrayData> f = io::ConvertArray(io::VectorF64(in, 4), v1::DTYPE_F32);
  ASSERT_TRUE(f.ok());
  float g[4];
  std::memcpy(g, f->bytes.data(), 16);
  EXPECT_EQ(g[2], 3e9f);
  EXPECT_TRUE(std::isnan(g[3]));
}

}  // namespace
}  // namespace histd::client
