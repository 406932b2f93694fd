#include "client/grpc_status.h"

#include <string>

namespace histd::client {

absl::Status FromRpcCode(int code, const std::string& message) {
  // grpc::StatusCode, absl::StatusCode and google.rpc.Code share their numbers 0..16.
  if (code < 0 || code > static_cast<int>(absl::StatusCode::kUnauthenticated)) {
    return absl::UnknownError(message.empty() ? "unknown status code " + std::to_string(code)
                                              : message);
  }
  return absl::Status(static_cast<absl::StatusCode>(code), message);
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return FromRpcCode(static_cast<int>(status.error_code()), status.error_message());
}

}  // namespace histd::client
