// Client-side pieces that need no server: npy/CSV/raw readers and writers, streaming
// sample readers, dtype conversion, status mapping and SampleBatcher's message cutting.
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

namespace histd::client {
namespace {

using io::ArrayData;
using v1::DType;

// A fresh temporary directory per test, removed with its files at the end.
class TempDir {
 public:
  TempDir() {
    char tmpl[] = "/tmp/histd_client_io_XXXXXX";
    dir_ = mkdtemp(tmpl);
  }
  ~TempDir() {
    for (const std::string& f : files_) std::remove(f.c_str());
    rmdir(dir_.c_str());
  }
  std::string Path(const std::string& name) {
    files_.push_back(dir_ + "/" + name);
    return files_.back();
  }

 private:
  std::string dir_;
  std::vector<std::string> files_;
};

void WriteFile(const std::string& path, const std::string& bytes) {
  FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  std::fclose(f);
}

std::string ReadFile(const std::string& path) {
  absl::StatusOr<std::string> s = io::ReadWholeFile(path);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : "";
}

uint64_t Seed() { return std::random_device{}(); }

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

// Reads a whole sample file through a reader in chunks of `chunk` samples.
std::string ReadAllSamples(io::SampleReader& reader, size_t chunk) {
  std::string out;
  while (true) {
    absl::StatusOr<size_t> got = reader.Read(chunk, &out);
    EXPECT_TRUE(got.ok()) << got.status();
    if (!got.ok() || *got == 0) break;
    EXPECT_LE(*got, chunk);
  }
  return out;
}

TEST(SampleReaderTest, RawAndNpyStreamInChunks) {
  const uint64_t seed = Seed();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 rng(seed);
  TempDir dir;
  for (size_t n : {size_t{0}, size_t{1}, size_t{10007}}) {
    std::vector<uint32_t> indices(n);
    for (auto& v : indices) v = static_cast<uint32_t>(rng());
    const std::string packed(reinterpret_cast<const char*>(indices.data()), 4 * n);
    std::vector<float> xy(2 * n);
    for (auto& v : xy) v = std::uniform_real_distribution<float>(-10, 10)(rng);
    const std::string packed_xy(reinterpret_cast<const char*>(xy.data()), 8 * n);

    const std::string u32 = dir.Path(absl::StrCat("s", n, ".u32"));
    WriteFile(u32, packed);
    const std::string f32 = dir.Path(absl::StrCat("s", n, ".f32"));
    WriteFile(f32, packed_xy);
    const std::string npy_idx = dir.Path(absl::StrCat("i", n, ".npy"));
    WriteFile(npy_idx, io::EncodeNpyHeader(v1::DTYPE_U32, {n}) + packed);
    const std::string npy_xy = dir.Path(absl::StrCat("x", n, ".npy"));
    WriteFile(npy_xy, io::EncodeNpyHeader(v1::DTYPE_F32, {n, 2}) + packed_xy);

    struct Case { std::string path; v1::SampleType type; const std::string* want; };
    for (const Case& c : {Case{u32, v1::SAMPLE_TYPE_BIN_INDEX_U32, &packed},
                          Case{f32, v1::SAMPLE_TYPE_XY_F32, &packed_xy},
                          Case{npy_idx, v1::SAMPLE_TYPE_BIN_INDEX_U32, &packed},
                          Case{npy_xy, v1::SAMPLE_TYPE_XY_F32, &packed_xy}}) {
      for (size_t chunk : {size_t{1}, size_t{1000}, size_t{1} << 20}) {
        if (chunk == 1 && n > 1000) continue;
        SCOPED_TRACE(absl::StrCat(c.path, " chunk ", chunk));
        absl::StatusOr<std::unique_ptr<io::SampleReader>> reader = io::OpenSampleReader(c.path);
        ASSERT_TRUE(reader.ok()) << reader.status();
        EXPECT_EQ((*reader)->type(), c.type);
        ASSERT_TRUE((*reader)->total_samples().has_value());
        EXPECT_EQ(*(*reader)->total_samples(), n);
        EXPECT_EQ(ReadAllSamples(**reader, chunk), *c.want);
        EXPECT_EQ((*reader)->bytes_consumed(), static_cast<uint64_t>((*reader)->file_bytes()));
      }
    }
  }
}

TEST(SampleReaderTest, RejectsFilesThatAreNotSamples) {
  TempDir dir;
  const std::string odd = dir.Path("odd.u32");
  WriteFile(odd, std::string(7, '\0'));
  EXPECT_EQ(io::OpenSampleReader(odd).status().code(), absl::StatusCode::kInvalidArgument);
  const std::string odd_xy = dir.Path("odd.f32");
  WriteFile(odd_xy, std::string(12, '\0'));
  EXPECT_EQ(io::OpenSampleReader(odd_xy).status().code(), absl::StatusCode::kInvalidArgument);
  const std::string unknown = dir.Path("samples.bin");
  WriteFile(unknown, std::string(8, '\0'));
  EXPECT_EQ(io::OpenSampleReader(unknown).status().code(), absl::StatusCode::kInvalidArgument);
  io::SampleReaderOptions as_xy;
  as_xy.type = v1::SAMPLE_TYPE_XY_F32;
  absl::StatusOr<std::unique_ptr<io::SampleReader>> r = io::OpenSampleReader(unknown, as_xy);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*(*r)->total_samples(), 1u);

  const std::string three = dir.Path("three.npy");
  WriteFile(three, io::EncodeNpyHeader(v1::DTYPE_F32, {2, 3}) + std::string(24, '\0'));
  EXPECT_EQ(io::OpenSampleReader(three).status().code(), absl::StatusCode::kInvalidArgument);
  const std::string i64 = dir.Path("i64.npy");
  WriteFile(i64, io::EncodeNpyHeader(v1::DTYPE_I64, {2}) + std::string(16, '\0'));
  EXPECT_EQ(io::OpenSampleReader(i64).status().code(), absl::StatusCode::kInvalidArgument);
  const std::string idx = dir.Path("idx.npy");
  WriteFile(idx, io::EncodeNpyHeader(v1::DTYPE_U32, {2}) + std::string(8, '\0'));
  EXPECT_EQ(io::OpenSampleReader(idx, as_xy).status().code(), absl::StatusCode::kInvalidArgument);
  const std::string truncated = dir.Path("trunc.npy");
  WriteFile(truncated, io::EncodeNpyHeader(v1::DTYPE_U32, {3}) + std::string(8, '\0'));
  EXPECT_EQ(io::OpenSampleReader(truncated).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(io::OpenSampleReader(dir.Path("none.u32")).status().code(), absl::StatusCode::kNotFound);
}

TEST(SampleReaderTest, CsvIndicesAndPairs) {
  TempDir dir;
  const std::string idx = dir.Path("i.csv");
  WriteFile(idx, "index\n# comment\n0\n\n4294967295\n  17  \n");
  absl::StatusOr<std::unique_ptr<io::SampleReader>> r = io::OpenSampleReader(idx);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->type(), v1::SAMPLE_TYPE_BIN_INDEX_U32);
  EXPECT_FALSE((*r)->total_samples().has_value());
  const std::string got = ReadAllSamples(**r, 2);
  const uint32_t want[] = {0, 4294967295u, 17};
  EXPECT_EQ(got, std::string(reinterpret_cast<const char*>(want), sizeof(want)));

  const std::string xy = dir.Path("xy.csv");
  WriteFile(xy, "x,y\n0.5,-1.25\n1e3, 7\n");
  r = io::OpenSampleReader(xy);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->type(), v1::SAMPLE_TYPE_XY_F32);
  const float want_xy[] = {0.5f, -1.25f, 1000.0f, 7.0f};
  EXPECT_EQ(ReadAllSamples(**r, 100), std::string(reinterpret_cast<const char*>(want_xy), sizeof(want_xy)));

  const std::string big = dir.Path("big.csv");
  WriteFile(big, "1\n2\n4294967296\n");
  r = io::OpenSampleReader(big);
  ASSERT_TRUE(r.ok()) << r.status();
  std::string out;
  absl::Status s;
  while (true) {
    absl::StatusOr<size_t> n = (*r)->Read(10, &out);
    if (!n.ok()) { s = n.status(); break; }
    if (*n == 0) break;
  }
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "line 3")) << s;

  const std::string neg = dir.Path("neg.csv");
  WriteFile(neg, "-1\n");
  r = io::OpenSampleReader(neg);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->Read(10, &out).status().code(), absl::StatusCode::kInvalidArgument);

  const std::string three = dir.Path("three.csv");
  WriteFile(three, "1,2,3\n");
  EXPECT_EQ(io::OpenSampleReader(three).status().code(), absl::StatusCode::kInvalidArgument);

  const std::string mixed = dir.Path("mixed.csv");
  WriteFile(mixed, "1\n2,3\n");
  r = io::OpenSampleReader(mixed);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)->Read(10, &out).status().code(), absl::StatusCode::kInvalidArgument);
}

// SampleBatcher: every message holds whole samples, at most max bytes, full ones exactly
// the largest multiple; per key the concatenation is the input and first_sample counts up.
TEST(SampleBatcherTest, CutsMessagesAtBoundaries) {
  const uint64_t seed = Seed();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 rng(seed);
  for (size_t max_bytes : {size_t{1}, size_t{4}, size_t{8}, size_t{10}, size_t{4096}, size_t{1000003}}) {
    SCOPED_TRACE(absl::StrCat("max_message_bytes ", max_bytes));
    SampleBatcher batcher(max_bytes);
    std::map<std::pair<std::string, int>, std::string> sent, received;
    std::map<std::pair<std::string, int>, uint64_t> next_first;
    auto emit = [&](SampleBatch&& b) {
      const size_t sample = SampleTypeBytes(b.type);
      const size_t full = std::max(sample, max_bytes / sample * sample);
      EXPECT_GT(b.payload.size(), 0u);
      EXPECT_LE(b.payload.size(), full);
      EXPECT_EQ(b.payload.size() % sample, 0u);
      EXPECT_EQ(b.samples * sample, b.payload.size());
      auto key = std::make_pair(b.histogram, static_cast<int>(b.type));
      EXPECT_EQ(b.first_sample, next_first[key]);
      next_first[key] += b.samples;
      received[key] += b.payload;
      return absl::OkStatus();
    };
    const int rounds = max_bytes > 10000 ? 12 : 200;  // large messages: fewer, bigger rounds
    for (int round = 0; round < rounds; ++round) {
      const std::string hist = absl::StrCat("h", rng() % 3);
      const v1::SampleType type = rng() % 2 ? v1::SAMPLE_TYPE_BIN_INDEX_U32 : v1::SAMPLE_TYPE_XY_F32;
      const size_t n = rng() % 5 == 0 ? 0 : rng() % (3 * max_bytes / 4 + 3);
      std::string bytes(n * SampleTypeBytes(type), '\0');
      for (char& c : bytes) c = static_cast<char>(rng());
      sent[{hist, type}] += bytes;
      ASSERT_TRUE(batcher.Add(hist, type, bytes, emit).ok());
      EXPECT_LT(batcher.pending_bytes(), 6 * std::max<size_t>(max_bytes, 8));
    }
    ASSERT_TRUE(batcher.Flush(emit).ok());
    EXPECT_EQ(batcher.pending_bytes(), 0u);
    EXPECT_EQ(received, sent);
  }
}

TEST(SampleBatcherTest, ExactMultiplesEmitWithoutFlush) {
  SampleBatcher batcher(16);  // 4 indices or 2 pairs per message
  std::vector<SampleBatch> out;
  auto emit = [&](SampleBatch&& b) { out.push_back(std::move(b)); return absl::OkStatus(); };
  const uint32_t indices[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  ASSERT_TRUE(batcher.Add("h", v1::SAMPLE_TYPE_BIN_INDEX_U32,
                          absl::string_view(reinterpret_cast<const char*>(indices), 32), emit).ok());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].samples, 4u);
  EXPECT_EQ(out[1].first_sample, 4u);
  EXPECT_EQ(batcher.pending_bytes(), 0u);
  // 3 samples stay pending until a fourth arrives or Flush.
  ASSERT_TRUE(batcher.Add("h", v1::SAMPLE_TYPE_BIN_INDEX_U32,
                          absl::string_view(reinterpret_cast<const char*>(indices), 12), emit).ok());
  EXPECT_EQ(out.size(), 2u);
  EXPECT_EQ(batcher.pending_bytes(), 12u);
  ASSERT_TRUE(batcher.Add("h", v1::SAMPLE_TYPE_BIN_INDEX_U32,
                          absl::string_view(reinterpret_cast<const char*>(indices), 4), emit).ok());
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2].first_sample, 8u);
  EXPECT_EQ(out[2].samples, 4u);
  ASSERT_TRUE(batcher.Flush(emit).ok());
  EXPECT_EQ(out.size(), 3u);  // nothing pending: Flush sends nothing, not an empty message
}

TEST(SampleBatcherTest, RejectsMisalignedInputAndPropagatesEmitErrors) {
  SampleBatcher batcher(8);
  int emitted = 0;
  auto emit = [&](SampleBatch&&) { ++emitted; return absl::OkStatus(); };
  EXPECT_EQ(batcher.Add("h", v1::SAMPLE_TYPE_XY_F32, "1234", emit).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(batcher.Add("h", v1::SAMPLE_TYPE_UNSPECIFIED, "1234", emit).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(batcher.pending_bytes(), 0u);
  EXPECT_EQ(emitted, 0);
  auto failing = [&](SampleBatch&&) { return absl::UnavailableError("stream broken"); };
  EXPECT_EQ(batcher.Add("h", v1::SAMPLE_TYPE_BIN_INDEX_U32, std::string(16, 'x'), failing).code(),
            absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace histd::client
