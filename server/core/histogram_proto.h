// Translation between a histogram's description (spec, ingest counters) and the histd.v1
// messages that carry it: the API's HistogramInfo and the snapshot file's records. The core
// uses protobuf messages only as the snapshot's file format; no gRPC type appears here.
//
// SpecFromProto checks what the proto allows but the model does not (a cap above 255) and
// returns INVALID_ARGUMENT naming the field. Thread safety: pure functions.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "histd/v1/histograms.pb.h"
#include "server/core/histogram_store.h"

namespace histd::server {

// cap 0 (unset) means 255.
absl::StatusOr<HistogramSpec> SpecFromProto(const v1::HistogramSpec& proto);
void SpecToProto(const HistogramSpec& spec, v1::HistogramSpec* proto);
// The ingest counters of a HistogramInfo (samples_applied .. samples_outside).
void CountersToProto(const IngestCounters& counters, v1::HistogramInfo* info);
IngestCounters CountersFromProto(const v1::HistogramInfo& info);
// Everything of a HistogramInfo but the bin sums (total_count, saturated_bins), which need
// the bins: spec, ingest counters, bytes used, and `device`.
void EntryToInfo(const HistogramEntry& entry, const std::string& device, v1::HistogramInfo* info);

}  // namespace histd::server
