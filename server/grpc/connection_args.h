// Options::Connections as gRPC channel arguments of the server builder.
//
//   CheckConnectionOptions(c)        INVALID_ARGUMENT naming the first option out of range.
//   AddConnectionArguments(c, b)     sets keepalive, ping policy and connection age on `b`.
//
// gRPC takes these arguments as int milliseconds with INT_MAX meaning "never": an infinite
// duration, or one beyond INT_MAX ms (24.8 days), becomes INT_MAX.
#pragma once

#include "absl/status/status.h"
#include "server/core/options.h"

namespace grpc {
class ServerBuilder;
}

namespace histd::server {

absl::Status CheckConnectionOptions(const Options::Connections& connections);

void AddConnectionArguments(const Options::Connections& connections, grpc::ServerBuilder& builder);

}  // namespace histd::server
