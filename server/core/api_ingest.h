// One histd.v1.Ingest message without its transport, once decoded: the checks the API makes
// before the pipeline sees it. The gRPC ingest reactor (server/grpc/ingest_service.cc) runs
// them for each message it decodes, around what belongs to its stream (shared-memory
// regions), then IngestPipeline::Submit; the fuzz targets (tests/fuzz/) do the same with
// payloads of their own.
//
// A message larger than --max_message_bytes is RESOURCE_EXHAUSTED (nothing of it applied),
// an unknown histogram NOT_FOUND, a sample type out of the enum INVALID_ARGUMENT (counted as
// a rejection of that histogram); the pipeline validates the samples themselves
// (server/core/ingest_validation.h).
// Thread safety: free functions; ServiceContext's pointees are thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/core/ingest_pipeline.h"
#include "server/core/sample_payload.h"
#include "server/core/service_context.h"

namespace histd::server::api {

// `message_bytes`: the message's size as received (the limit applies to it).
absl::Status CheckIngestMessageSize(const ServiceContext& ctx, size_t message_bytes);

// The pipeline message for `samples` of `histogram`; `type` is the v1::SampleType number as
// sent.
absl::StatusOr<IngestPipeline::Message> IngestMessageFor(const ServiceContext& ctx,
                                                         const std::string& histogram,
                                                         int32_t type, SamplePayload samples);

}  // namespace histd::server::api
