// histd.v1.IngestRequest decoded straight from the slices gRPC received it in.
//
// The ingest stream is registered as a raw method (ingest_service.h), so a request arrives
// as a grpc::ByteBuffer. Parsing it with protobuf would copy the samples into a fresh
// std::string per message; this decoder reads the few header fields and keeps the samples
// where they are (SamplePayload holds references to the slices), so the only copy the
// daemon makes of a sample is the validating one into pinned staging memory.
//
// Contract: decodes what protobuf's parser accepts, with its semantics: fields in any
// order; a singular field that occurs more than once takes its last value (a message field
// is merged, as protobuf merges it); unknown fields,
// and known field numbers carried with another wire type, are skipped. Rejected with
// INVALID_ARGUMENT, naming the byte offset: a truncated field, a varint longer than 10
// bytes (a tag or a length longer than 5, a length of 2^31 or more: protobuf's limits; a
// tag's bits above 32 are dropped, as protobuf drops them), field number 0, groups, wire
// types 6 and 7, a shm or register_shm field protobuf cannot parse. The histogram name (and
// unregister_shm) is not checked
// for UTF-8 (names are checked where histograms are created; an unknown name is NOT_FOUND
// downstream). `type` is the enum's number as sent (open enum).
// Thread safety: a pure function.
#pragma once

#include <cstdint>
#include <string>

#include <vector>

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include "absl/status/statusor.h"
#include "histd/v1/ingest.pb.h"
#include "server/core/sample_payload.h"

namespace histd::server {

struct DecodedIngestRequest {
  uint64_t sequence = 0;
  std::string histogram;
  int32_t type = 0;  // v1::SampleType
  SamplePayload samples;
  // Zero-copy local ingest (docs/shm-ingest.md); the has_ flags say the field was present.
  bool has_shm = false;
  v1::ShmSamples shm;
  bool has_register_shm = false;
  v1::ShmRegistration register_shm;
  std::string unregister_shm;
};

absl::StatusOr<DecodedIngestRequest> DecodeIngestRequest(const grpc::ByteBuffer& request);

// The bytes [offset, offset + size) of `slices` laid end to end, as a payload that keeps the
// slices referenced. Requires that range to lie inside them.
SamplePayload PayloadFromSlices(std::vector<grpc::Slice> slices, size_t offset, size_t size);

}  // namespace histd::server
