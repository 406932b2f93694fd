// What the ingest pipeline tests submit and wait for: a histogram created in a store, a
// message of bin indices into it, and a message's acknowledgement.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "server/core/histogram_store.h"
#include "server/core/ingest_pipeline.h"

namespace histd::server::testing {

// Creates `name` in `store`; nullptr (and a test failure) when that fails.
inline std::shared_ptr<HistogramEntry> MustCreate(HistogramStore& store, const std::string& name,
                                                  HistogramShape shape) {
  HistogramSpec spec;
  spec.name = name;
  spec.shape = shape;
  absl::StatusOr<std::shared_ptr<HistogramEntry>> entry = store.Create(spec);
  EXPECT_TRUE(entry.ok()) << entry.status();
  return entry.ok() ? *entry : nullptr;
}

// A message of bin indices into `histogram`.
inline IngestPipeline::Message Indices(std::shared_ptr<HistogramEntry> histogram,
                                       const std::vector<uint32_t>& indices) {
  std::string bytes(indices.size() * 4, '\0');
  std::memcpy(bytes.data(), indices.data(), bytes.size());
  IngestPipeline::Message message;
  message.histogram = std::move(histogram);
  message.kind = SampleKind::kBinIndex;
  message.samples = SamplePayload(std::move(bytes));
  return message;
}

// A message's acknowledgement, once.
struct Ack {
  absl::Notification done;
  absl::Status status = absl::UnknownError("never acknowledged");
  void Set(absl::Status s) {
    status = std::move(s);
    done.Notify();
  }
};

}  // namespace histd::server::testing
