// Fuzz target: the ingest stream's in-place request decoder (server/grpc/ingest_request_decoder.h)
// and the validating copy into staging (server/core/ingest_validation.h).
//
// Feeds: a 5-byte header, then cut positions, then the wire bytes of one IngestRequest:
//   byte 0: bits 0-2 the number of cuts k, bit 3 x axis, bit 4 y axis, bit 5 rows and cols
//           shifted left by 16, bit 6 CopyStores::kCached, bit 7 a staging destination
//           misaligned by 4 bytes;
//   bytes 1-2, 3-4: rows, cols (little-endian);  bytes 5..5+k: where the wire bytes are cut
//   into slices (as gRPC may deliver them; empty slices included).
// Asserts: DecodeIngestRequest agrees with protobuf's generated parser (of a copy of the
// message with `histogram` as bytes: no UTF-8 check): when the decoder accepts, protobuf
// parses and the last sequence, histogram, type and samples fields match (and the
// shared-memory fields: shm and register_shm merged, unregister_shm last); when protobuf
// parses and the message holds no group, the decoder accepts; rejections are
// INVALID_ARGUMENT. For a decoded payload of a
// known sample type, CheckIngestMessage + CopyValidatedPayload accept exactly when the
// length is a multiple of the sample size, coordinates go to a histogram with both axes
// and every index is < rows x cols, and then copy the samples unchanged and count the NaN
// coordinates per axis; the codes are INVALID_ARGUMENT (FAILED_PRECONDITION without axes).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <grpc/grpc.h>
#include <grpcpp/grpcpp.h>

#include "google/protobuf/stubs/logging.h"
#include "google/protobuf/unknown_field_set.h"
#include "histd_fuzz.pb.h"
#include "server/grpc/ingest_request_decoder.h"
#include "server/core/ingest_validation.h"

namespace histd::fuzz {
namespace {

using google::protobuf::UnknownField;
using google::protobuf::UnknownFieldSet;

[[noreturn]] void Fail(const char* what, const std::string& detail) {
  std::fprintf(stderr, "ingest_decoder_fuzz: %s: %s\n", what, detail.c_str());
  std::abort();
}

struct Reference {
  bool parses = false;
  bool has_group = false;
  uint64_t sequence = 0;
  std::string histogram;
  int32_t type = 0;
  std::string samples;
  std::string shm;           // serialized, empty when absent
  std::string register_shm;  // likewise
  bool has_shm = false, has_register_shm = false;
  std::string unregister_shm;
};

Reference Parse(const std::string& wire) {
  Reference ref;
  IngestRequestWire message;
  ref.parses = message.ParseFromString(wire);
  if (!ref.parses) return ref;
  ref.sequence = message.sequence();
  ref.histogram = message.histogram();
  ref.type = message.type();
  ref.samples = message.samples();
  ref.has_shm = message.has_shm();
  ref.shm = message.shm().SerializeAsString();
  ref.has_register_shm = message.has_register_shm();
  ref.register_shm = message.register_shm().SerializeAsString();
  ref.unregister_shm = message.unregister_shm();
  const UnknownFieldSet& unknown = message.GetReflection()->GetUnknownFields(message);
  for (int i = 0; i < unknown.field_count(); ++i) {
    if (unknown.field(i).type() == UnknownField::TYPE_GROUP) ref.has_group = true;
  }
  return ref;
}

void CheckValidation(const uint8_t* header, const server::DecodedIngestRequest& decoded) {
  if (decoded.type != 1 && decoded.type != 2) return;  // the service rejects other types first
  const SampleKind kind =
      decoded.type == 1 ? SampleKind::kBinIndex : SampleKind::kCoordXY;
  server::HistogramSpec spec;
  spec.name = "h";
  const int shift = (header[0] & 0x20) ? 16 : 0;
  spec.shape.rows = static_cast<uint32_t>(header[1] | header[2] << 8) << shift;
  spec.shape.cols = static_cast<uint32_t>(header[3] | header[4] << 8) << shift;
  spec.shape.cap = 255;
  if (header[0] & 0x08) spec.x_axis = AxisRange{0.0f, 1.0f};
  if (header[0] & 0x10) spec.y_axis = AxisRange{0.0f, 1.0f};
  const server::CopyStores stores =
      (header[0] & 0x40) ? server::CopyStores::kCached : server::CopyStores::kAuto;

  const std::string samples = decoded.samples.ToString();
  const size_t element = SampleBytes(kind);
  const uint64_t bins = uint64_t{spec.shape.rows} * spec.shape.cols;
  bool want_ok = samples.size() % element == 0 && (kind == SampleKind::kBinIndex || spec.has_both_axes());
  server::NanCounts want_nans;
  for (size_t i = 0; want_ok && i + 4 <= samples.size(); i += 4) {
    uint32_t word;
    std::memcpy(&word, samples.data() + i, 4);
    if (kind == SampleKind::kBinIndex) {
      want_ok = word < bins;
    } else {
      float f;
      std::memcpy(&f, &word, 4);
      (i % 8 == 0 ? want_nans.x : want_nans.y) += std::isnan(f);
    }
  }

  absl::Status status = server::CheckIngestMessage(spec, kind, samples.size());
  std::vector<uint32_t> staging(samples.size() / 4 + 2);
  uint8_t* dst = reinterpret_cast<uint8_t*>(staging.data()) + ((header[0] & 0x80) ? 4 : 0);
  server::NanCounts nans;
  if (status.ok()) {
    status = server::CopyValidatedPayload(spec, kind, decoded.samples, 0, samples.size() / element,
                                          dst, stores, &nans);
  }
  if (status.ok() != want_ok) {
    Fail("validation disagrees with the reference", status.ToString());
  }
  if (!status.ok() && !absl::IsInvalidArgument(status) && !absl::IsFailedPrecondition(status)) {
    Fail("validation gave an unexpected code", status.ToString());
  }
  if (status.ok() && std::memcmp(dst, samples.data(), samples.size()) != 0) {
    Fail("validated copy differs from the samples", "");
  }
  if (status.ok() && (nans.x != want_nans.x || nans.y != want_nans.y)) {
    Fail("NaN counts differ from the reference", std::to_string(nans.x) + ", " + std::to_string(nans.y));
  }
}

}  // namespace
}  // namespace histd::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace histd;
  static const bool quiet = [] {
    google::protobuf::SetLogHandler(nullptr);
    return true;
  }();
  (void)quiet;
  if (size < 5) return -1;
  const uint8_t* header = data;
  const size_t cuts_n = header[0] & 7;
  if (size < 5 + cuts_n) return -1;
  const std::string wire(reinterpret_cast<const char*>(data + 5 + cuts_n), size - 5 - cuts_n);
  std::vector<size_t> cuts = {0, wire.size()};
  for (size_t i = 0; i < cuts_n; ++i) cuts.push_back(header[5 + i] * (wire.size() + 1) / 256);
  std::sort(cuts.begin(), cuts.end());
  std::vector<grpc::Slice> slices;
  for (size_t i = 0; i + 1 < cuts.size(); ++i) slices.emplace_back(wire.data() + cuts[i], cuts[i + 1] - cuts[i]);
  const grpc::ByteBuffer buffer(slices.data(), slices.size());

  const absl::StatusOr<server::DecodedIngestRequest> decoded = server::DecodeIngestRequest(buffer);
  const fuzz::Reference ref = fuzz::Parse(wire);
  if (decoded.ok()) {
    if (!ref.parses) fuzz::Fail("decoded what protobuf refuses", "");
    if (decoded->sequence != ref.sequence || decoded->histogram != ref.histogram ||
        decoded->type != ref.type || decoded->samples.size() != ref.samples.size() ||
        decoded->samples.ToString() != ref.samples || decoded->has_shm != ref.has_shm ||
        decoded->shm.SerializeAsString() != ref.shm ||
        decoded->has_register_shm != ref.has_register_shm ||
        decoded->register_shm.SerializeAsString() != ref.register_shm ||
        decoded->unregister_shm != ref.unregister_shm) {
      fuzz::Fail("decoded fields differ from protobuf's", "");
    }
    fuzz::CheckValidation(header, *decoded);
  } else {
    if (!absl::IsInvalidArgument(decoded.status())) fuzz::Fail("unexpected code", decoded.status().ToString());
    if (ref.parses && !ref.has_group) fuzz::Fail("refused what protobuf parses", decoded.status().ToString());
  }
  return 0;
}
