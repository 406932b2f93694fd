// DecodeIngestRequest (the ingest stream's in-place decoder) against protobuf's own parser,
// and SamplePayload / CopyValidatedPayload over payloads split at arbitrary byte positions.
// Requests are serialized by protobuf, cut into random slices (as gRPC may deliver them) and
// decoded; every prefix of a request must decode exactly when protobuf parses it.
#include "server/grpc/ingest_request_decoder.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "histd/v1/ingest.pb.h"
#include "server/core/ingest_validation.h"
#include "tests/server/grpc/service_fixture.h"

namespace histd::server::testing {
namespace {

// `bytes` cut at random positions into slices; some cuts make empty slices.
grpc::ByteBuffer Sliced(const std::string& bytes, std::mt19937_64& rng, int max_cuts) {
  std::vector<size_t> cuts = {0, bytes.size()};
  const int n = max_cuts > 0 ? static_cast<int>(rng() % (max_cuts + 1)) : 0;
  for (int i = 0; i < n; ++i) cuts.push_back(bytes.empty() ? 0 : rng() % (bytes.size() + 1));
  std::sort(cuts.begin(), cuts.end());
  std::vector<grpc::Slice> slices;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) {
    slices.emplace_back(bytes.data() + cuts[i], cuts[i + 1] - cuts[i]);
  }
  return grpc::ByteBuffer(slices.data(), slices.size());
}

v1::IngestRequest RandomRequest(std::mt19937_64& rng) {
  v1::IngestRequest r;
  if (rng() % 4 != 0) r.set_sequence(rng() >> (rng() % 64));
  if (rng() % 4 != 0) r.set_histogram(std::string(rng() % 40, 'a' + rng() % 26));
  if (rng() % 4 != 0) r.set_type(static_cast<v1::SampleType>(rng() % 3));
  std::string samples(rng() % 3 == 0 ? rng() % 9 : rng() % 5000, '\0');
  for (char& c : samples) c = static_cast<char>(rng());
  r.set_samples(samples);
  if (rng() % 4 == 0) {
    r.mutable_shm()->set_region(std::string(rng() % 10, 'r'));
    if (rng() % 2) r.mutable_shm()->set_offset(rng());
    if (rng() % 2) r.mutable_shm()->set_count(rng() >> (rng() % 64));
  }
  if (rng() % 4 == 0) {
    r.mutable_register_shm()->set_region(std::string(rng() % 10, 'q'));
    r.mutable_register_shm()->set_key("/histd-" + std::to_string(rng() % 100));
    r.mutable_register_shm()->set_byte_size(rng());
  }
  if (rng() % 4 == 0) r.set_unregister_shm(std::string(1 + rng() % 10, 'u'));
  return r;
}

void ExpectSame(const DecodedIngestRequest& got, const v1::IngestRequest& want) {
  EXPECT_EQ(got.sequence, want.sequence());
  EXPECT_EQ(got.histogram, want.histogram());
  EXPECT_EQ(got.type, static_cast<int32_t>(want.type()));
  EXPECT_EQ(got.samples.size(), want.samples().size());
  EXPECT_EQ(got.samples.ToString(), want.samples());
  EXPECT_EQ(got.has_shm, want.has_shm());
  EXPECT_EQ(got.shm.SerializeAsString(), want.shm().SerializeAsString());
  EXPECT_EQ(got.has_register_shm, want.has_register_shm());
  EXPECT_EQ(got.register_shm.SerializeAsString(), want.register_shm().SerializeAsString());
  EXPECT_EQ(got.unregister_shm, want.unregister_shm());
}

TEST(IngestRequestDecoderTest, SharedMemoryFieldsMergeAsProtobufDoes) {
  v1::IngestRequest a, b;
  a.mutable_shm()->set_region("r");
  a.mutable_shm()->set_offset(8);
  b.mutable_shm()->set_count(5);
  b.set_unregister_shm("x");
  const std::string wire = a.SerializeAsString() + b.SerializeAsString();
  v1::IngestRequest want;
  ASSERT_TRUE(want.ParseFromString(wire));
  std::mt19937_64 rng(1);
  absl::StatusOr<DecodedIngestRequest> got = DecodeIngestRequest(Sliced(wire, rng, 3));
  ASSERT_TRUE(got.ok()) << got.status();
  ExpectSame(*got, want);
  EXPECT_EQ(got->shm.region(), "r");
  EXPECT_EQ(got->shm.offset(), 8u);
  EXPECT_EQ(got->shm.count(), 5u);
  EXPECT_FALSE(got->has_register_shm);
  // A nested message protobuf refuses (a truncated varint inside field 5) is refused too.
  const std::string bad = std::string("\x2a\x02\x10\x80", 4);
  v1::IngestRequest parsed;
  EXPECT_FALSE(parsed.ParseFromString(bad));
  absl::StatusOr<DecodedIngestRequest> refused = DecodeIngestRequest(Sliced(bad, rng, 0));
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << refused.status();
}

TEST(IngestRequestDecoderTest, RandomRequestsInRandomSlicesDecodeLikeProtobuf) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 300; ++i) {
    const v1::IngestRequest want = RandomRequest(rng);
    const std::string wire = want.SerializeAsString();
    absl::StatusOr<DecodedIngestRequest> got = DecodeIngestRequest(Sliced(wire, rng, 12));
    ASSERT_TRUE(got.ok()) << got.status();
    ExpectSame(*got, want);
    EXPECT_GE(got->samples.span_count(), want.samples().empty() ? 0u : 1u);
  }
}

TEST(IngestRequestDecoderTest, EveryPrefixDecodesExactlyWhenProtobufParsesIt) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  int rejected = 0;
  for (int i = 0; i < 20; ++i) {
    v1::IngestRequest full = RandomRequest(rng);
    full.mutable_samples()->resize(full.samples().size() % 200);
    const std::string wire = full.SerializeAsString();
    for (size_t len = 0; len <= wire.size(); ++len) {
      SCOPED_TRACE(::testing::Message() << "prefix " << len << " of " << wire.size());
      const std::string prefix = wire.substr(0, len);
      v1::IngestRequest want;
      const bool parsed = want.ParseFromString(prefix);
      absl::StatusOr<DecodedIngestRequest> got = DecodeIngestRequest(Sliced(prefix, rng, 4));
      ASSERT_EQ(got.ok(), parsed) << got.status();
      if (parsed) {
        ExpectSame(*got, want);
      } else {
        ++rejected;
        EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
        EXPECT_NE(got.status().message().find("malformed histd.v1.IngestRequest"),
                  std::string::npos);
      }
    }
  }
  EXPECT_GT(rejected, 0);  // some cut fell inside a field
}

// Appends a field with the given tag and raw payload bytes.
void AppendVarint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>(v | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

TEST(IngestRequestDecoderTest, UnknownFieldsAndWrongWireTypesAreSkippedRepeatsTakeTheLast) {
  v1::IngestRequest first;
  first.set_sequence(7);
  first.set_histogram("old");
  first.set_samples(std::string(12, 'x'));
  v1::IngestRequest second;
  second.set_histogram("new");
  second.set_samples(std::string(8, 'y'));
  second.set_type(v1::SAMPLE_TYPE_XY_F32);
  std::string wire = first.SerializeAsString();
  AppendVarint(&wire, (99u << 3) | 0);  // unknown varint
  AppendVarint(&wire, 123456789);
  AppendVarint(&wire, (100u << 3) | 1);  // unknown fixed64
  wire.append(8, '\x01');
  AppendVarint(&wire, (101u << 3) | 5);  // unknown fixed32
  wire.append(4, '\x02');
  AppendVarint(&wire, (102u << 3) | 2);  // unknown length-delimited
  AppendVarint(&wire, 3);
  wire.append("abc");
  AppendVarint(&wire, (1u << 3) | 2);  // sequence sent as bytes: not the sequence
  AppendVarint(&wire, 1);
  wire.append("z");
  AppendVarint(&wire, (4u << 3) | 0);  // samples sent as a varint: not the samples
  AppendVarint(&wire, 5);
  wire += second.SerializeAsString();  // concatenation = merge: the last value wins

  v1::IngestRequest want;
  ASSERT_TRUE(want.ParseFromString(wire));
  ASSERT_EQ(want.samples(), std::string(8, 'y'));
  std::mt19937_64 rng(TestSeed());
  for (int i = 0; i < 50; ++i) {
    absl::StatusOr<DecodedIngestRequest> got = DecodeIngestRequest(Sliced(wire, rng, 20));
    ASSERT_TRUE(got.ok()) << got.status();
    ExpectSame(*got, want);
  }
}

TEST(IngestRequestDecoderTest, MalformedInputNamesTheProblem) {
  struct Case {
    std::string wire;
    const char* says;
  };
  std::string group;
  AppendVarint(&group, (5u << 3) | 3);  // start group
  std::string long_varint;
  AppendVarint(&long_varint, (1u << 3) | 0);
  long_varint.append(10, '\xff');
  long_varint.push_back('\x01');
  std::string zero_field;
  AppendVarint(&zero_field, 0);
  std::string too_long;
  AppendVarint(&too_long, (4u << 3) | 2);
  AppendVarint(&too_long, 1000);
  too_long.append(10, 's');
  for (const Case& c : {Case{group, "wire type"}, Case{long_varint, "varint"},
                        Case{zero_field, "field number"}, Case{too_long, "longer than"}}) {
    v1::IngestRequest proto;
    EXPECT_FALSE(proto.ParseFromString(c.wire));
    absl::StatusOr<DecodedIngestRequest> got =
        DecodeIngestRequest(grpc::ByteBuffer(std::vector<grpc::Slice>{grpc::Slice(c.wire)}.data(), 1));
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(got.status().message().find(c.says), std::string::npos) << got.status();
  }
}

// Regression (ingest decoder fuzz target): tags and lengths are read as protobuf reads them,
// at most 5 bytes, a tag's bits above 32 dropped; the decoder had read both as 10-byte
// varints, refusing a 5-byte tag with high bits that protobuf accepts and accepting an
// overlong length that protobuf refuses.
TEST(IngestRequestDecoderTest, TagsAndLengthsFollowProtobufsFiveByteLimits) {
  v1::IngestRequest base;
  base.set_sequence(3);
  base.set_samples("abcd");
  // Field 4 (samples, length-delimited) with bit 32 set in a 5-byte tag: still field 4.
  std::string high_tag = base.SerializeAsString() + std::string("\xa2\x80\x80\x80\x10\x02xy", 8);
  // A 6-byte tag, and a 6-byte length of 2 (overlong encodings of small values).
  std::string long_tag = base.SerializeAsString() + std::string("\x88\x80\x80\x80\x80\x00\x01", 7);
  std::string long_length = base.SerializeAsString() + std::string("\x22\x82\x80\x80\x80\x80\x00xy", 9);
  for (const std::string& wire : {high_tag, long_tag, long_length}) {
    v1::IngestRequest want;
    const bool parsed = want.ParseFromString(wire);
    absl::StatusOr<DecodedIngestRequest> got =
        DecodeIngestRequest(grpc::ByteBuffer(std::vector<grpc::Slice>{grpc::Slice(wire)}.data(), 1));
    ASSERT_EQ(got.ok(), parsed) << got.status();
    if (parsed) ExpectSame(*got, want);
  }
  v1::IngestRequest want;
  ASSERT_TRUE(want.ParseFromString(high_tag));
  EXPECT_EQ(want.samples(), "xy");
}

TEST(IngestRequestDecoderTest, EmptyMessageIsAllDefaults) {
  absl::StatusOr<DecodedIngestRequest> got = DecodeIngestRequest(grpc::ByteBuffer());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->sequence, 0u);
  EXPECT_EQ(got->histogram, "");
  EXPECT_EQ(got->samples.size(), 0u);
}

// A payload over many small slices, each sample likely straddling two of them: the fused
// copy + check gives the same bytes, names the same first offender (an index out of range)
// and counts the same NaNs (valid coordinates, counted apart) as on one buffer.
TEST(SamplePayloadTest, ValidatedCopyOverSplitPayloadMatchesContiguous) {
  const uint64_t seed = TestSeed();
  SCOPED_TRACE(::testing::Message() << "seed " << seed);
  std::mt19937_64 rng(seed);
  HistogramSpec spec;
  spec.name = "p";
  spec.shape.rows = 30;
  spec.shape.cols = 70;
  spec.shape.cap = 255;
  spec.x_axis = AxisRange{0, 1};
  spec.y_axis = AxisRange{0, 1};
  for (SampleKind kind : {SampleKind::kBinIndex, SampleKind::kCoordXY}) {
    const size_t element = SampleBytes(kind);
    for (int trial = 0; trial < 200; ++trial) {
      const size_t count = rng() % 3000;
      const size_t prefix = rng() % 7;  // the samples start anywhere in the first slice
      std::string wire(prefix + count * element + rng() % 5, '\0');
      for (size_t i = 0; i < count; ++i) {
        if (kind == SampleKind::kBinIndex) {
          const uint32_t v = static_cast<uint32_t>(rng() % 2100);
          std::memcpy(&wire[prefix + 4 * i], &v, 4);
        } else {
          const float xy[2] = {static_cast<float>(rng() % 1000) / 999.f, -3.5f};
          std::memcpy(&wire[prefix + 8 * i], xy, 8);
        }
      }
      size_t bad = count;
      if (count > 0 && rng() % 2 == 0) {
        bad = rng() % count;
        const uint32_t poison = kind == SampleKind::kBinIndex ? 2100u : 0x7fc00000u;  // NaN
        std::memcpy(&wire[prefix + bad * element + (rng() % (element / 4)) * 4], &poison, 4);
      }
      grpc::ByteBuffer buffer = Sliced(wire, rng, 1 + static_cast<int>(rng() % 400));
      std::vector<grpc::Slice> slices;
      ASSERT_TRUE(buffer.Dump(&slices).ok());
      const SamplePayload payload = PayloadFromSlices(std::move(slices), prefix, count * element);
      ASSERT_EQ(payload.size(), count * element);
      ASSERT_EQ(payload.ToString(), wire.substr(prefix, count * element));
      // A part of the message, as a staging buffer would take it.
      const size_t first = count > 0 ? rng() % count : 0;
      const size_t n = count > 0 ? rng() % (count - first + 1) : 0;
      std::vector<uint8_t> got(n * element + 8, 0xA5), want(n * element + 8, 0xA5);
      NanCounts nans_contiguous, nans_split;
      const absl::Status contiguous = CopyValidatedSamples(
          spec, kind, reinterpret_cast<const uint8_t*>(wire.data() + prefix + first * element),
          n, want.data(), first, CopyStores::kAuto, &nans_contiguous);
      const absl::Status split = CopyValidatedPayload(spec, kind, payload, first, n, got.data(),
                                                      CopyStores::kAuto, &nans_split);
      const bool poisoned_part = bad >= first && bad < first + n;
      ASSERT_EQ(split.ok(), kind == SampleKind::kCoordXY || !poisoned_part) << split;
      ASSERT_EQ(split, contiguous);
      EXPECT_EQ(nans_split.x + nans_split.y,
                kind == SampleKind::kCoordXY && poisoned_part ? 1u : 0u);
      EXPECT_EQ(nans_split.x, nans_contiguous.x);
      EXPECT_EQ(nans_split.y, nans_contiguous.y);
      if (split.ok()) {
        EXPECT_EQ(got, want);  // every byte, and nothing past the part
      } else {
        EXPECT_NE(split.message().find("sample " + std::to_string(bad) + ":"), std::string::npos)
            << split;
      }
      const absl::Status check_only = CopyValidatedPayload(spec, kind, payload, 0, count, nullptr);
      EXPECT_EQ(check_only.ok(), kind == SampleKind::kCoordXY || bad >= count);
    }
  }
}

}  // namespace
}  // namespace histd::server::testing
