#include "server/core/api_ingest.h"

#include <memory>
#include <utility>

#include "absl/strings/str_format.h"
#include "histd/v1/ingest.pb.h"
#include "server/core/proto_convert.h"

namespace histd::server::api {

absl::Status CheckIngestMessageSize(const ServiceContext& ctx, size_t message_bytes) {
  const uint64_t limit = static_cast<uint64_t>(ctx.options->limits.max_message_bytes);
  if (message_bytes <= limit) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrFormat(
      "message of %d bytes is larger than --max_message_bytes=%d; split it (nothing of it was "
      "applied)",
      message_bytes, limit));
}

absl::StatusOr<IngestPipeline::Message> IngestMessageFor(const ServiceContext& ctx,
                                                         const std::string& histogram,
                                                         int32_t type, SamplePayload samples) {
  absl::StatusOr<std::shared_ptr<HistogramEntry>> entry = ctx.store->Find(histogram);
  if (!entry.ok()) return entry.status();
  absl::StatusOr<SampleKind> kind = SampleKindFromProto(static_cast<v1::SampleType>(type));
  if (!kind.ok()) {
    (*entry)->RecordRejected(0);
    return kind.status();
  }
  IngestPipeline::Message message;
  message.histogram = *std::move(entry);
  message.kind = *kind;
  message.samples = std::move(samples);
  return message;
}

}  // namespace histd::server::api
