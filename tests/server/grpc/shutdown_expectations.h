// What a producer using the client library must see when the server shuts down under it:
// the stream ends UNAVAILABLE, every message written has exactly one known fate (applied,
// or rejected UNAVAILABLE because it crossed the shutdown notice), none is left unknown.
#pragma once

#include <gtest/gtest.h>

#include "client/ingest_stream.h"

namespace histd::testing {

inline void ExpectEveryMessageSettledByShutdown(const client::IngestSummary& s) {
  EXPECT_EQ(s.stream_status.code(), absl::StatusCode::kUnavailable) << s.stream_status;
  EXPECT_EQ(s.unacknowledged, 0u);
  EXPECT_EQ(s.counters.messages_acked + s.counters.messages_rejected, s.counters.messages_sent);
  for (const client::IngestAck& r : s.rejected) {
    EXPECT_EQ(r.status.code(), absl::StatusCode::kUnavailable) << r.status;
  }
}

}  // namespace histd::testing
