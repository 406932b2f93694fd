// The one place where a grpc::Status becomes an absl::Status on the client side.
// Contract: the code (same numeric value in both enums) and the message are kept as they
// are; the error details blob is dropped. OK maps to OK.
#pragma once

#include <grpcpp/support/status.h>

#include "absl/status/status.h"

namespace histd::client {

absl::Status FromGrpcStatus(const grpc::Status& status);

// A google.rpc.Code number and message (as in IngestResponse) as an absl::Status;
// an unknown number becomes UNKNOWN.
absl::Status FromRpcCode(int code, const std::string& message);

}  // namespace histd::client
