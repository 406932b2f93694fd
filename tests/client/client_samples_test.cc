// Client-side sample handling without a server: streaming sample readers (raw, npy, CSV)
// and SampleBatcher's cutting of samples into ingest messages. Random inputs are seeded;
// the seed is printed on failure (SCOPED_TRACE).
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/io/npy.h"
#include "client/io/sample_reader.h"
#include "client/sample_batcher.h"
#include "gtest/gtest.h"
#include "tests/client/client_test_util.h"

namespace histd::client {
namespace {

using test::Seed;
using test::TempDir;
using test::WriteFile;

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
  const std::string i64 = dir.Path("i64.npy");  // integers, but not one index per row
  WriteFile(i64, io::EncodeNpyHeader(v1::DTYPE_I64, {2, 2}) + std::string(32, '\0'));
  EXPECT_EQ(io::OpenSampleReader(i64).status().code(), absl::StatusCode::kInvalidArgument);
  const std::string idx = dir.Path("idx.npy");
  WriteFile(idx, io::EncodeNpyHeader(v1::DTYPE_U32, {2}) + std::string(8, '\0'));
  EXPECT_EQ(io::OpenSampleReader(idx, as_xy).status().code(), absl::StatusCode::kInvalidArgument);
  const std::string truncated = dir.Path("trunc.npy");
  WriteFile(truncated, io::EncodeNpyHeader(v1::DTYPE_U32, {3}) + std::string(8, '\0'));
  EXPECT_EQ(io::OpenSampleReader(truncated).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(io::OpenSampleReader(dir.Path("none.u32")).status().code(), absl::StatusCode::kNotFound);
}

// Regression (npy fuzz target): the data size is computed overflow-checked; 8 x (2^61 + 1)
// wrapped to 8, so a header declaring 2^61 + 1 uint64 indices passed for 8 data bytes.
TEST(SampleReaderTest, AnNpyShapeWhoseSizeOverflowsIsRefused) {
  TempDir dir;
  const std::string huge = dir.Path("huge.npy");
  WriteFile(huge, io::EncodeNpyHeader(v1::DTYPE_U64, {(uint64_t{1} << 61) + 1}) + std::string(8, '\0'));
  EXPECT_EQ(io::OpenSampleReader(huge).status().code(), absl::StatusCode::kInvalidArgument);
  const std::string huge_xy = dir.Path("huge_xy.npy");  // 2^60 + 1 pairs of float64: 16 bytes
  WriteFile(huge_xy, io::EncodeNpyHeader(v1::DTYPE_F64, {(uint64_t{1} << 60) + 1, 2}) + std::string(16, '\0'));
  EXPECT_EQ(io::OpenSampleReader(huge_xy).status().code(), absl::StatusCode::kInvalidArgument);
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
      if (!bytes.empty()) sent[{hist, type}] += bytes;  // an empty Add emits nothing
      ASSERT_TRUE(batcher.Add(hist, type, bytes, emit).ok());
      EXPECT_LT(batcher.pending_bytes(), 6 * std::max<size_t>(max_bytes, 8));
    }
    ASSERT_TRUE(batcher.Flush(emit).ok());
    EXPECT_EQ(batcher.pending_bytes(), 0u);
    // Not EXPECT_EQ: gtest's diff of multi-megabyte strings exhausts memory.
    EXPECT_EQ(received.size(), sent.size());
    EXPECT_TRUE(received == sent) << "the payloads differ";
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
