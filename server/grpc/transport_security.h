// What the gRPC ports are served with: TLS credentials, protected mode, reflection.
//
//   CheckProtectedMode(options)   FAILED_PRECONDITION, saying what to configure, when
//                                 `address` is not loopback and the daemon has neither TLS
//                                 nor a tokens file, or http.address is not loopback and
//                                 there is no tokens file; unless security.allow_insecure.
//   MakeServerCredentials(sec)    TLS (mutual when tls_client_ca_file is set) with the files
//                                 watched by gRPC's FileWatcherCertificateProvider, so that a
//                                 renewed certificate serves new connections without a
//                                 restart; insecure credentials without tls_cert_file. The
//                                 files are read and checked once here (PEM parses, the key
//                                 belongs to the certificate), so a mistake stops the start
//                                 with a message instead of failing every handshake.
//   ReflectionOption(enabled)     a ServerBuilder option that serves grpc.reflection on
//                                 that one server, or not (gRPC's own switch is process-wide).
//   IsLoopbackAddress(address)    127.0.0.0/8, ::1, localhost, unix: sockets.
// Thread safety: plain functions.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/impl/server_builder_option.h>
#include <grpcpp/security/server_credentials.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/core/options.h"

namespace histd::server {

bool IsLoopbackAddress(const std::string& address);

absl::Status CheckProtectedMode(const Options& options);

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const Options::Security& security);

std::unique_ptr<grpc::ServerBuilderOption> ReflectionOption(bool enabled);

// "TLS", "mutual TLS" or "plaintext", and ", tokens" with access control: for the log.
std::string DescribeSecurity(const Options::Security& security);

}  // namespace histd::server
