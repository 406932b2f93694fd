// The one place where absl::Status becomes grpc::Status (the service boundary).
// Codes share their numbers (both follow google.rpc.Code); the message is kept.
#pragma once

#include "absl/status/status.h"
#include <grpcpp/support/status.h>

namespace histd::server {

grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace histd::server
