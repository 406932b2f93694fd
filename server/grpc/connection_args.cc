#include "server/grpc/connection_args.h"

#include <cstdint>
#include <limits>

#include <grpcpp/server_builder.h>

#include "absl/strings/str_format.h"
#include "absl/time/time.h"

namespace histd::server {
namespace {

constexpr int kNever = std::numeric_limits<int>::max();

int Milliseconds(absl::Duration d) {
  if (d >= absl::Milliseconds(kNever)) return kNever;  // also the infinite duration
  return static_cast<int>(absl::ToInt64Milliseconds(d));
}

absl::Status AtLeast(absl::Duration value, absl::Duration least, const char* name) {
  if (value >= least) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrFormat("%s must be at least %s, got %s", name,
                                                    absl::FormatDuration(least),
                                                    absl::FormatDuration(value)));
}

}  // namespace

absl::Status CheckConnectionOptions(const Options::Connections& c) {
  const absl::Duration ms = absl::Milliseconds(1);
  for (absl::Status s : {AtLeast(c.keepalive_time, ms, "grpc_keepalive_time"),
                         AtLeast(c.keepalive_timeout, ms, "grpc_keepalive_timeout"),
                         AtLeast(c.http2_min_recv_ping_interval_without_data, absl::ZeroDuration(),
                                 "grpc_http2_min_recv_ping_interval_without_data"),
                         AtLeast(c.max_connection_age, ms, "grpc_max_connection_age"),
                         AtLeast(c.max_connection_age_grace, absl::ZeroDuration(),
                                 "grpc_max_connection_age_grace")}) {
    if (!s.ok()) return s;
  }
  if (c.http2_max_ping_strikes < 0) {
    return absl::InvalidArgumentError("grpc_http2_max_ping_strikes must be >= 0");
  }
  return absl::OkStatus();
}

void AddConnectionArguments(const Options::Connections& c, grpc::ServerBuilder& builder) {
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, Milliseconds(c.keepalive_time));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, Milliseconds(c.keepalive_timeout));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS,
                             c.keepalive_permit_without_calls ? 1 : 0);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                             Milliseconds(c.http2_min_recv_ping_interval_without_data));
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, c.http2_max_ping_strikes);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS, Milliseconds(c.max_connection_age));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
                             Milliseconds(c.max_connection_age_grace));
}

}  // namespace histd::server
